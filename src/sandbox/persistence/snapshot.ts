/** The records of a whole sandbox, for a rewrite of the file (compaction) or a migration. A rewrite
 * starts while no save is under way, and every save made while it runs is copied after it, so:
 * map entries and set members are read as the records are written, a slice at a time (an entry
 * written early is overwritten by its later `put`; a member added twice is one member); lists are
 * written as far as saves have taken them (`written`, from the change cursor), since the items
 * after that are appended by those later saves. */
import { KEYED, MEMBERS, NUMBERS, kept, keyedMap, membersOf, names, type SandboxMemory } from './collections';
import type { WrittenLists } from './changes';
import type { JournalRecord } from './records';

export function snapshotRecords(m: SandboxMemory, written: WrittenLists): Iterable<JournalRecord> {
  const numbers = names(NUMBERS).map((name) => ({ op: 'set', in: name, value: NUMBERS[name].get(m) }) as const);
  return (function* (): Generator<JournalRecord> {
    yield* numbers;
    for (const name of names(KEYED)) {
      for (const [key, value] of keyedMap(m, name)) if (kept(name, value)) yield { op: 'put', in: name, key, value };
    }
    for (const name of names(MEMBERS)) for (const key of membersOf(m, name)) yield { op: 'add', in: name, key };
    for (const [name, { list, written: length }] of written.lists) for (let i = 0; i < length; i++) yield { op: 'append', in: name, value: list[i] };
    for (const [name, positions] of written.byKey) {
      for (const [key, { list, written: length }] of positions) for (let i = 0; i < length; i++) yield { op: 'append', in: name, key, value: list[i] };
    }
  })();
}
