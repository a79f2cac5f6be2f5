/** The sandbox's memory on disk, for the dev stack: a restart of `npm run dev` continues with the
 * same orders, payments, transfers, linked accounts, balances, settlements and idempotency keys
 * (tests keep the sandbox in memory). Saved a moment after a change and on close, atomically
 * (temporary file, then rename); transfers left pending by a stop are processed on the next start. */
import fs from 'node:fs';
import path from 'node:path';
import type { SandboxContext } from './context';
import type { SettlementBook } from './settlements';

const VERSION = 1;

/** JSON with Maps and Sets kept as what they are. */
function replacer(_key: string, value: unknown): unknown {
  if (value instanceof Map) return { __map: [...value.entries()] };
  if (value instanceof Set) return { __set: [...value.values()] };
  return value;
}
function reviver(_key: string, value: unknown): unknown {
  if (value && typeof value === 'object') {
    if ('__map' in value) return new Map((value as { __map: Array<[unknown, unknown]> }).__map);
    if ('__set' in value) return new Set((value as { __set: unknown[] }).__set);
  }
  return value;
}

interface Snapshot {
  version: number;
  clockOffsetMs: number;
  state: Record<string, unknown>;
  book: Record<string, unknown>;
  idempotency: unknown;
  refundIdempotency: unknown;
}

function snapshotOf(ctx: SandboxContext, book: SettlementBook): string {
  const snapshot: Snapshot = {
    version: VERSION,
    clockOffsetMs: ctx.clock.offset(),
    state: { ...ctx.state },
    book: { ...book },
    idempotency: ctx.idempotency.snapshot(),
    refundIdempotency: ctx.refundIdempotency.snapshot(),
  };
  return JSON.stringify(snapshot, replacer);
}

/** Loads `file` into the sandbox if it exists; true when it did. A file of another version or a
 * broken one is set aside (renamed), never half-loaded. */
export function restoreSandbox(file: string, ctx: SandboxContext, book: SettlementBook): boolean {
  if (!fs.existsSync(file)) return false;
  let snapshot: Snapshot;
  try {
    snapshot = JSON.parse(fs.readFileSync(file, 'utf8'), reviver) as Snapshot;
    if (snapshot.version !== VERSION) throw new Error(`version ${snapshot.version}`);
  } catch (err) {
    fs.renameSync(file, `${file}.unreadable-${Date.now()}`);
    process.stderr.write(`sandbox: ${file} could not be read (${(err as Error).message}); starting empty\n`);
    return false;
  }
  Object.assign(ctx.state, snapshot.state);
  Object.assign(book, snapshot.book);
  ctx.idempotency.restore(snapshot.idempotency);
  ctx.refundIdempotency.restore(snapshot.refundIdempotency);
  ctx.clock.setOffset(snapshot.clockOffsetMs);
  return true;
}

/** Saves a moment after a change (checked every `everyMs`) and once more on `flush()`. */
export function persistSandbox(file: string, ctx: SandboxContext, book: SettlementBook, everyMs = 500): { flush(): void; stop(): void } {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let last = '';
  const save = () => {
    const text = snapshotOf(ctx, book);
    if (text === last) return;
    const tmp = `${file}.tmp`;
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
    last = text;
  };
  const timer = setInterval(save, everyMs);
  timer.unref();
  return { flush: save, stop: () => clearInterval(timer) };
}
