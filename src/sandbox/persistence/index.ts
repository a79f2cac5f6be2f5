/** The sandbox's memory on disk, for the dev stack: a restart of `npm run dev` continues with the
 * same orders, payments, transfers, linked accounts, balances, settlements and idempotency keys
 * (tests keep the sandbox in memory); transfers left pending by a stop are processed on the next
 * start (index.ts).
 *
 * The file is a journal (journalText.ts): every `saveEveryMs` the entries that changed since the
 * last save are appended as JSON lines, closed by a commit line, so a save costs what changed, not
 * what the sandbox holds (it shares the event loop with the API and the worker in `npm run dev`).
 * Loading replays the committed records; a save a crash cut short is dropped. When the file holds
 * `compactAtMultiple` times the records the live state needs, it is rewritten beside itself in
 * slices (compaction.ts) and renamed into place. A state file of the previous format (one JSON
 * object) is read and rewritten as a journal. The file is owner-only (0600). */
import { liveRecordCount, type SandboxMemory } from './collections';
import { ChangeCursor, batchRecords } from './changes';
import { Compaction, writeWhole } from './compaction';
import { JournalFile } from './journalFile';
import { COMMIT_LINE } from './journalText';
import { loadStateFile } from './load';
import { snapshotRecords } from './snapshot';
import { writeInSlices, type SlicedWrite } from './slices';

export type { SandboxMemory } from './collections';

export interface SandboxJournalOptions {
  /** How often changes are saved. */
  saveEveryMs?: number;
  /** The most JSON a write serialises in one turn of the event loop (characters). */
  sliceChars?: number;
  /** Rewrite the file once it holds this many times the records the live state needs… */
  compactAtMultiple?: number;
  /** …and at least this many records. */
  compactMinRecords?: number;
}

export interface SandboxJournal {
  /** The file held a sandbox, now loaded. */
  readonly restored: boolean;
  /** Writes every change not written yet, now, the save under way included. */
  flush(): void;
  /** Rewrites the file as the live state (in slices); resolves once the new file is in place. */
  compact(): Promise<void>;
  /** Saves what is left and closes the file; a rewrite under way is dropped (the file it would
   * replace holds the same state). */
  close(): void;
}

const DEFAULTS: Required<SandboxJournalOptions> = { saveEveryMs: 500, sliceChars: 128 * 1024, compactAtMultiple: 2, compactMinRecords: 20_000 };

export function openSandboxJournal(file: string, m: SandboxMemory, options: SandboxJournalOptions = {}): SandboxJournal {
  const opts = { ...DEFAULTS, ...options };
  const loaded = loadStateFile(file, m);
  const cursor = ChangeCursor.at(m);
  const opened = loaded.rewrite ? writeWhole(file, snapshotRecords(m, cursor.written()), opts.sliceChars) : { journal: JournalFile.append(file), records: loaded.records };
  let journal = opened.journal;
  let fileRecords = opened.records;
  let save: SlicedWrite | null = null;
  let compaction: { rewrite: Compaction; installed: Promise<void> } | null = null;

  const append = (text: string, records: number) => {
    journal.write(text);
    fileRecords += records;
    compaction?.rewrite.copy(text, records);
  };
  const saving = () => save !== null && !save.done;

  const startSave = () => {
    const batch = cursor.take(m);
    if (!batch) return;
    save = writeInSlices(batchRecords(m, batch), {
      sliceChars: opts.sliceChars,
      write: append,
      onDone: () => {
        append(COMMIT_LINE, 0);
        // On a turn of its own, so that it starts between saves.
        if (shouldCompact()) setImmediate(() => { if (!closed && !saving() && shouldCompact()) void startCompaction(); });
      },
    });
  };
  const saveNow = () => {
    save?.finishNow();
    startSave();
    save?.finishNow();
  };

  const shouldCompact = () => !compaction && fileRecords >= opts.compactMinRecords && fileRecords > opts.compactAtMultiple * liveRecordCount(m);

  /** Only between saves: the snapshot's lists stop where the saves have taken them. */
  const startCompaction = (): Promise<void> => {
    const rewrite = new Compaction(file, opts.sliceChars);
    let installed!: () => void;
    const running = { rewrite, installed: new Promise<void>((resolve) => { installed = resolve; }) };
    compaction = running;
    rewrite.start(snapshotRecords(m, cursor.written()), () => {
      // What changed while the snapshot was written is saved (and so copied) before the switch: the
      // new file then says exactly what memory holds.
      saveNow();
      const next = rewrite.install();
      journal.close();
      journal = next.journal;
      fileRecords = next.records;
      compaction = null;
      installed();
    });
    return running.installed;
  };

  let closed = false;
  const timer = setInterval(() => { if (!saving()) startSave(); }, opts.saveEveryMs);
  timer.unref();

  return {
    restored: loaded.restored,
    flush: saveNow,
    compact() {
      saveNow();
      return compaction?.installed ?? startCompaction();
    },
    close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      saveNow();
      compaction?.rewrite.abandon();
      compaction = null;
      journal.close();
    },
  };
}
