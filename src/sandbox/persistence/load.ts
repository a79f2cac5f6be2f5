/** Loading the state file into a sandbox at start: a journal's committed records (what follows the
 * last commit is cut off, so that saves append after whole records), or a file of the previous
 * format (to be rewritten as a journal). A file that cannot be read whole is set aside and the
 * sandbox starts empty, never half-loaded. */
import { KEYED, MEMBERS, keyedMap, membersOf, names, type SandboxMemory } from './collections';
import { readStateFile, setAside, truncateStateFile } from './journalFile';
import { readJournal } from './journalText';
import { legacyRecords, looksLegacy } from './legacySnapshot';
import { applyRecord, relinkOrderTransfers, type JournalRecord } from './records';

interface Loaded {
  restored: boolean;
  /** Records the file holds (commits aside). */
  records: number;
  /** The file must be written afresh: there was none, it was set aside, or it is of the old format. */
  rewrite: boolean;
}

export function loadStateFile(file: string, m: SandboxMemory): Loaded {
  const text = readStateFile(file);
  if (text === null) return { restored: false, records: 0, rewrite: true };
  let records: JournalRecord[];
  let committedLength = text.length;
  try {
    if (looksLegacy(text)) records = legacyRecords(text);
    else ({ records, committedLength } = readJournal(text));
    for (const record of records) applyRecord(m, record);
  } catch (err) {
    forget(m);
    setAside(file, (err as Error).message);
    return { restored: false, records: 0, rewrite: true };
  }
  relinkOrderTransfers(m);
  if (looksLegacy(text)) return { restored: true, records: records.length, rewrite: true };
  if (committedLength < text.length) truncateStateFile(file, Buffer.byteLength(text.slice(0, committedLength)));
  return { restored: true, records: records.length, rewrite: false };
}

/** After a file that could not be read whole: nothing of it stays. */
function forget(m: SandboxMemory): void {
  m.ctx.state.reset();
  m.book.reset();
  for (const name of names(KEYED)) keyedMap(m, name).clear();
  for (const name of names(MEMBERS)) membersOf(m, name).clear();
  m.ctx.clock.setOffset(0);
}
