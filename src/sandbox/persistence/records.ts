/** The records of the state file, one JSON object a line, and how each one changes a sandbox.
 * Replaying a file's records in order gives the state it was written from; for a keyed map the last
 * `put` or `delete` of a key wins, so a rewrite may repeat what the file already says. */
import { KEYED, LISTS, LISTS_BY_KEY, MEMBERS, NUMBERS, keyedMap, listOf, listsByKey, membersOf, type KeyedName, type ListName, type ListsByKeyName, type MembersName, type NumberName, type SandboxMemory } from './collections';

export type JournalRecord =
  | { op: 'put'; in: KeyedName; key: string; value: unknown }
  | { op: 'delete'; in: KeyedName | MembersName | ListsByKeyName; key: string }
  | { op: 'add'; in: MembersName; key: string }
  | { op: 'append'; in: ListName; value: unknown }
  | { op: 'append'; in: ListsByKeyName; key: string; value: unknown }
  | { op: 'clear'; in: KeyedName | MembersName | ListName | ListsByKeyName }
  | { op: 'set'; in: NumberName; value: number }
  /** Everything since the previous commit was one save: a save cut short by a crash is dropped whole. */
  | { op: 'commit' };

/** The first line of every state file. */
export const JOURNAL_HEADER = { journal: 'razorpay-sandbox', version: 2 } as const;

const has = <T extends object>(shape: T, name: unknown): name is keyof T => typeof name === 'string' && Object.hasOwn(shape, name);

class BadRecord extends Error {
  constructor(record: unknown) {
    super(`not a state record: ${JSON.stringify(record).slice(0, 200)}`);
  }
}

/** Applies one record; throws on a record this version does not know (the file is then not loaded). */
export function applyRecord(m: SandboxMemory, r: JournalRecord): void {
  const key = (r as { key?: unknown }).key;
  const keyed = typeof key === 'string';
  switch (r.op) {
    case 'put':
      if (!has(KEYED, r.in) || !keyed) throw new BadRecord(r);
      keyedMap(m, r.in).set(r.key, r.value);
      return;
    case 'delete':
      if (!keyed) throw new BadRecord(r);
      if (has(KEYED, r.in)) keyedMap(m, r.in).delete(r.key);
      else if (has(MEMBERS, r.in)) membersOf(m, r.in).delete(r.key);
      else if (has(LISTS_BY_KEY, r.in)) listsByKey(m, r.in).delete(r.key);
      else throw new BadRecord(r);
      return;
    case 'add':
      if (!has(MEMBERS, r.in) || !keyed) throw new BadRecord(r);
      membersOf(m, r.in).add(r.key);
      return;
    case 'append':
      if (has(LISTS, r.in)) listOf(m, r.in).push(r.value);
      else if (has(LISTS_BY_KEY, r.in) && 'key' in r && keyed) appendByKey(listsByKey(m, r.in), r.key, r.value);
      else throw new BadRecord(r);
      return;
    case 'clear':
      if (has(KEYED, r.in)) keyedMap(m, r.in).clear();
      else if (has(MEMBERS, r.in)) membersOf(m, r.in).clear();
      else if (has(LISTS, r.in)) LISTS[r.in].replace(m, []);
      else if (has(LISTS_BY_KEY, r.in)) listsByKey(m, r.in).clear();
      else throw new BadRecord(r);
      return;
    case 'set':
      if (!has(NUMBERS, r.in) || typeof r.value !== 'number') throw new BadRecord(r);
      NUMBERS[r.in].set(m, r.value);
      return;
    case 'commit':
      return;
    default:
      throw new BadRecord(r);
  }
}

function appendByKey(lists: Map<string, unknown[]>, key: string, value: unknown): void {
  const list = lists.get(key);
  if (list) list.push(value);
  else lists.set(key, [value]);
}

/** In memory an order's transfers are the transfer entities themselves once they run (a transfer's
 * status shows on its order); a file holds copies, so after loading the order points at them again. */
export function relinkOrderTransfers(m: SandboxMemory): void {
  const { orders, transfers } = m.ctx.state;
  for (const order of orders.values()) {
    if (order.transfers) order.transfers = order.transfers.map((t) => transfers.get(t.id) ?? t);
  }
}
