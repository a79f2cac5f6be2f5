/** What changed since the last save, and the records that write it. Taking the changes is cheap and
 * immediate (the changed keys, list positions, numbers); the values are read when the records are
 * written, a slice at a time. A value changed again in between is marked again, so the next save
 * writes it once more: the file never ends up older than memory. */
import type { KeyChanges } from '../tracked';
import {
  KEYED, LISTS, LISTS_BY_KEY, MEMBERS, NUMBERS, kept, keyedMap, listOf, listsByKey, membersOf, names,
  type KeyedName, type ListName, type ListsByKeyName, type MembersName, type NumberName, type SandboxMemory,
} from './collections';
import type { JournalRecord } from './records';

/** How far a list has been written. */
export interface ListPosition { list: unknown[]; written: number }

/** The lists as far as they have been taken by saves. */
export interface WrittenLists {
  lists: Array<[ListName, ListPosition]>;
  byKey: Array<[ListsByKeyName, Array<[string, ListPosition]>]>;
}

/** Items [from, to) of `list` are new; `restart`: the list was replaced or emptied, write it afresh. */
export interface ListRange { list: unknown[]; from: number; to: number; restart: boolean }

export function rangeSince(position: ListPosition | undefined, list: unknown[]): ListRange {
  const restart = position !== undefined && (position.list !== list || list.length < position.written);
  const from = restart || position === undefined ? 0 : position.written;
  return { list, from, to: list.length, restart };
}

const isEmpty = (r: ListRange): boolean => !r.restart && r.from === r.to;
const hasChanges = (c: KeyChanges<string>): boolean => c.cleared || c.keys.size > 0;

export interface ChangeBatch {
  keyed: Array<[KeyedName, KeyChanges<string>]>;
  members: Array<[MembersName, KeyChanges<string>]>;
  lists: Array<[ListName, ListRange]>;
  listsByKey: Array<[ListsByKeyName, { removed: string[]; ranges: Array<[string, ListRange]> }]>;
  numbers: Array<[NumberName, number]>;
}

/** Where the file is, relative to memory: the written part of each list, the numbers last written. */
export class ChangeCursor {
  private lists = new Map<ListName, ListPosition>();
  private byKey = new Map<ListsByKeyName, Map<string, ListPosition>>();
  private numbers = new Map<NumberName, number>();

  /** A cursor for a file that holds memory as it is now (just loaded, or just written whole). */
  static at(m: SandboxMemory): ChangeCursor {
    const cursor = new ChangeCursor();
    cursor.take(m);
    return cursor;
  }

  /** Takes what changed since the last take; null when nothing did. */
  take(m: SandboxMemory): ChangeBatch | null {
    const batch: ChangeBatch = {
      keyed: names(KEYED).map((name) => [name, keyedMap(m, name).takeChanges()] as [KeyedName, KeyChanges<string>]).filter(([, c]) => hasChanges(c)),
      members: names(MEMBERS).map((name) => [name, membersOf(m, name).takeChanges()] as [MembersName, KeyChanges<string>]).filter(([, c]) => hasChanges(c)),
      lists: names(LISTS).map((name) => [name, this.takeList(name, listOf(m, name))] as [ListName, ListRange]).filter(([, r]) => !isEmpty(r)),
      listsByKey: names(LISTS_BY_KEY).map((name) => [name, this.takeListsByKey(name, listsByKey(m, name))] as ChangeBatch['listsByKey'][number])
        .filter(([, c]) => c.removed.length > 0 || c.ranges.length > 0),
      numbers: names(NUMBERS).map((name) => [name, NUMBERS[name].get(m)] as [NumberName, number]).filter(([name, value]) => this.takeNumber(name, value)),
    };
    const changed = batch.keyed.length + batch.members.length + batch.lists.length + batch.listsByKey.length + batch.numbers.length;
    return changed > 0 ? batch : null;
  }

  /** How far each list has been taken (positions are replaced, never changed, by later takes). */
  written(): WrittenLists {
    return { lists: [...this.lists], byKey: [...this.byKey].map(([name, positions]) => [name, [...positions]]) };
  }

  private takeList(name: ListName, list: unknown[]): ListRange {
    const range = rangeSince(this.lists.get(name), list);
    this.lists.set(name, { list, written: list.length });
    return range;
  }

  private takeListsByKey(name: ListsByKeyName, lists: Map<string, unknown[]>): { removed: string[]; ranges: Array<[string, ListRange]> } {
    const positions = this.byKey.get(name) ?? new Map<string, ListPosition>();
    this.byKey.set(name, positions);
    const removed = [...positions.keys()].filter((key) => !lists.has(key));
    for (const key of removed) positions.delete(key);
    const ranges: Array<[string, ListRange]> = [];
    for (const [key, list] of lists) {
      const range = rangeSince(positions.get(key), list);
      positions.set(key, { list, written: list.length });
      if (!isEmpty(range)) ranges.push([key, range]);
    }
    return { removed, ranges };
  }

  private takeNumber(name: NumberName, value: number): boolean {
    const changed = this.numbers.get(name) !== value;
    this.numbers.set(name, value);
    return changed;
  }
}

/** The records of a batch, reading each changed entry's value as it goes. */
export function* batchRecords(m: SandboxMemory, batch: ChangeBatch): Generator<JournalRecord> {
  for (const [name, value] of batch.numbers) yield { op: 'set', in: name, value };
  for (const [name, changes] of batch.keyed) {
    if (changes.cleared) yield { op: 'clear', in: name };
    const map = keyedMap(m, name);
    for (const key of changes.keys) {
      const value = map.get(key);
      if (value === undefined) yield { op: 'delete', in: name, key };
      else if (kept(name, value)) yield { op: 'put', in: name, key, value };
    }
  }
  for (const [name, changes] of batch.members) {
    if (changes.cleared) yield { op: 'clear', in: name };
    const members = membersOf(m, name);
    for (const key of changes.keys) yield members.has(key) ? { op: 'add', in: name, key } : { op: 'delete', in: name, key };
  }
  for (const [name, range] of batch.lists) {
    if (range.restart) yield { op: 'clear', in: name };
    for (let i = range.from; i < range.to; i++) yield { op: 'append', in: name, value: range.list[i] };
  }
  for (const [name, { removed, ranges }] of batch.listsByKey) {
    for (const key of removed) yield { op: 'delete', in: name, key };
    for (const [key, range] of ranges) {
      if (range.restart) yield { op: 'delete', in: name, key };
      for (let i = range.from; i < range.to; i++) yield { op: 'append', in: name, key, value: range.list[i] };
    }
  }
}
