/** Writes records as lines a slice at a time, one slice per turn of the event loop, so that a large
 * write (a rewrite of the whole state, a save after a burst) never holds the API and the worker that
 * share the loop for longer than one slice takes to serialise. The first slice is written at once:
 * a save of a few changes is done before this returns. */
import { lineOf } from './journalText';
import type { JournalRecord } from './records';

export interface SlicedWrite {
  readonly done: boolean;
  /** Writes everything left, now (a close must not wait for the loop). */
  finishNow(): void;
  /** Stops; `onDone` is not called. */
  cancel(): void;
}

/** `write` gets each slice's text and how many records it holds. */
export function writeInSlices(records: Iterable<JournalRecord>, opts: { sliceChars: number; write(text: string, records: number): void; onDone(): void }): SlicedWrite {
  const source = records[Symbol.iterator]();
  let done = false;
  let cancelled = false;
  let scheduled: NodeJS.Immediate | null = null;

  /** One slice, or everything when `limit` is Infinity; true when the records ran out. */
  const writeSlice = (limit: number): boolean => {
    const lines: string[] = [];
    let chars = 0;
    let next = source.next();
    while (!next.done) {
      const line = lineOf(next.value);
      lines.push(line);
      chars += line.length;
      if (chars >= limit) break;
      next = source.next();
    }
    if (lines.length > 0) opts.write(lines.join(''), lines.length);
    return next.done === true;
  };
  const finish = () => {
    done = true;
    opts.onDone();
  };
  const step = () => {
    scheduled = null;
    if (cancelled) return;
    if (writeSlice(opts.sliceChars)) finish();
    else scheduled = setImmediate(step);
  };
  step();

  return {
    get done() { return done; },
    finishNow() {
      if (done || cancelled) return;
      if (scheduled) clearImmediate(scheduled);
      scheduled = null;
      writeSlice(Infinity);
      finish();
    },
    cancel() {
      cancelled = true;
      if (scheduled) clearImmediate(scheduled);
      scheduled = null;
    },
  };
}
