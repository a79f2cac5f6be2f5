/** A rewrite of the state file as the live state, once the file holds mostly entries written over
 * since. The new file is written beside the old one in slices (writeInSlices) while saves go on
 * appending to the old one; their text is kept and copied after the snapshot, so the new file,
 * once renamed into place, says everything the old one said. Until then the old file is the state. */
import { JournalFile } from './journalFile';
import { COMMIT_LINE, HEADER_LINE } from './journalText';
import type { JournalRecord } from './records';
import { writeInSlices, type SlicedWrite } from './slices';

export class Compaction {
  private readonly target: JournalFile;
  private readonly savedMeanwhile: string[] = [];
  private records = 0;
  private writer: SlicedWrite | null = null;

  constructor(private readonly file: string, private readonly sliceChars: number) {
    this.target = JournalFile.rewriteOf(file);
  }

  /** Writes `snapshot` (the live state) in slices; `onWritten` when it is all in the new file. */
  start(snapshot: Iterable<JournalRecord>, onWritten: () => void): void {
    this.target.write(HEADER_LINE);
    this.writer = writeInSlices(snapshot, {
      sliceChars: this.sliceChars,
      write: (text, records) => {
        this.target.write(text);
        this.records += records;
      },
      onDone: () => {
        this.target.write(COMMIT_LINE);
        onWritten();
      },
    });
  }

  /** A save's text, appended to the old file while this runs. */
  copy(text: string, records: number): void {
    this.savedMeanwhile.push(text);
    this.records += records;
  }

  /** Once the snapshot is written and the last save copied: the new file takes the old one's place
   * and is returned, open for the next saves, with how many records it holds. */
  install(): { journal: JournalFile; records: number } {
    for (const text of this.savedMeanwhile.splice(0)) this.target.write(text);
    this.target.replace(this.file);
    return { journal: this.target, records: this.records };
  }

  /** Writes the rest of the snapshot now. */
  finishNow(): void {
    this.writer?.finishNow();
  }

  abandon(): void {
    this.writer?.cancel();
    this.target.discard();
  }
}

/** A first file, or one replacing a file of the previous format: the whole state, written now
 * (nothing else runs yet). */
export function writeWhole(file: string, snapshot: Iterable<JournalRecord>, sliceChars: number): { journal: JournalFile; records: number } {
  const rewrite = new Compaction(file, sliceChars);
  let written: { journal: JournalFile; records: number } | null = null;
  rewrite.start(snapshot, () => { written = rewrite.install(); });
  rewrite.finishNow();
  return written!;
}
