/** The state file as text: a header line, then records, one JSON object a line, each save closed by
 * a commit line. Reading keeps what the last commit covers; what follows it (a save a crash cut
 * short, a torn last line) is left out. JSON escapes every newline inside a value, so a line is
 * always a whole record. */
import { JOURNAL_HEADER, type JournalRecord } from './records';

export const HEADER_LINE = `${JSON.stringify(JOURNAL_HEADER)}\n`;
export const COMMIT_LINE = `${JSON.stringify({ op: 'commit' } satisfies JournalRecord)}\n`;
export const lineOf = (record: JournalRecord): string => `${JSON.stringify(record)}\n`;

export const isJournal = (text: string): boolean => text.startsWith(HEADER_LINE);

export interface JournalContents {
  /** The committed records, in order, commits left out. */
  records: JournalRecord[];
  /** How much of the text they take (header included); anything after it was not committed. */
  committedLength: number;
}

/** Throws when the header or a committed line is not what this version writes. */
export function readJournal(text: string): JournalContents {
  if (!isJournal(text)) throw new Error('no journal header');
  const lastCommit = text.lastIndexOf(`\n${COMMIT_LINE}`);
  const committedLength = lastCommit < 0 ? HEADER_LINE.length : lastCommit + 1 + COMMIT_LINE.length;
  const records: JournalRecord[] = [];
  const lines = text.slice(HEADER_LINE.length, committedLength).split('\n');
  lines.pop();
  for (const [i, line] of lines.entries()) {
    let record: JournalRecord;
    try {
      record = JSON.parse(line) as JournalRecord;
    } catch {
      throw new Error(`line ${i + 2} is not JSON`);
    }
    if (record.op !== 'commit') records.push(record);
  }
  return { records, committedLength };
}
