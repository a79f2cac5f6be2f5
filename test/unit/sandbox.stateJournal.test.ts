/** The sandbox's state file as a journal: a save writes what changed (bytes proportional to the
 * change, not to the state), a restart replays it to the same state, a save cut short by a crash is
 * dropped, a file of the old format is migrated, and the file is rewritten (compacted) as the live
 * state while changes go on. Driven through the sandbox's own functions (no HTTP), so that tens of
 * thousands of orders take seconds. Nothing here is timed: sizes are asserted in bytes and records. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/config';
import { createSandboxMemory, sandboxOptionsFrom } from '../../src/sandbox';
import { captureByApi, createOrder, failPayment, lateAuthorize, payOrder } from '../../src/sandbox/checkout';
import { createRefund, processRefund } from '../../src/sandbox/refunds';
import { createDirectTransfer, createPaymentTransfers, processPendingTransfers, retryFailedTransfers, reverseTransfer } from '../../src/sandbox/transfers';
import { fetchSettlement, runSettlements, SettlementBook } from '../../src/sandbox/settlements';
import type { IdempotencyStore } from '../../src/sandbox/idempotency';
import { createSandboxControl } from '../../src/sandbox/sandboxControl';
import { directTransferBody, orderBody, parseRequest, refundBody } from '../../src/sandbox/rules';
import { SandboxState } from '../../src/sandbox/state';
import { openSandboxJournal, type SandboxJournalOptions, type SandboxMemory } from '../../src/sandbox/persistence';
import { KEYED, LISTS, LISTS_BY_KEY, MEMBERS, NUMBERS } from '../../src/sandbox/persistence/collections';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-journal-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
let files = 0;
const newFile = () => path.join(dir, `state-${++files}.json`);

const memories: SandboxMemory[] = [];
/** Transfers and refunds stay pending until the test moves them (processPendingTransfers, processRefund). */
function newMemory(): SandboxMemory {
  const m = createSandboxMemory({ ...sandboxOptionsFrom(loadConfig({})), webhookUrl: null, transferProcessingDelayMs: 60_000 }, new AbortController().signal);
  memories.push(m);
  return m;
}
afterEach(() => { for (const m of memories.splice(0)) m.ctx.timers.clear(); });

/** No save but the ones a test asks for (flush, close). */
const quiet: SandboxJournalOptions = { saveEveryMs: 3_600_000 };

/** Everything the sandbox remembers, as the previous state file wrote it (Maps and Sets in order). */
function dump(m: SandboxMemory): string {
  const answered = (entries: Map<string, { answer: unknown }>) => [...entries].filter(([, e]) => e.answer !== null);
  return JSON.stringify(
    { state: m.ctx.state, book: m.book, idempotency: answered(m.ctx.idempotency.entries), refundIdempotency: answered(m.ctx.refundIdempotency.entries), clockOffsetMs: m.ctx.clock.offset() },
    (_key, value: unknown) => (value instanceof Map ? { map: [...value] } : value instanceof Set ? { set: [...value] } : value),
  );
}

/** Where two dumps part, rather than two screens of JSON. */
function expectSame(actual: string, expected: string): void {
  let at = 0;
  while (at < actual.length && actual[at] === expected[at]) at++;
  expect(actual.slice(Math.max(0, at - 300), at + 200)).toBe(expected.slice(Math.max(0, at - 300), at + 200));
}

function reopened(file: string, options: SandboxJournalOptions = quiet): SandboxMemory {
  const m = newMemory();
  const journal = openSandboxJournal(file, m, options);
  expect(journal.restored).toBe(true);
  journal.close();
  return m;
}

/** Bytes `act` wrote to `file`: what it appended, or the whole file if it replaced or rewrote it. */
function bytesWrittenBy(file: string, act: () => void): number {
  const before = fs.readFileSync(file);
  const inode = fs.statSync(file).ino;
  act();
  const after = fs.readFileSync(file);
  const appended = fs.statSync(file).ino === inode && after.length >= before.length && after.subarray(0, before.length).equals(before);
  return appended ? after.length - before.length : after.length;
}

const order = (m: SandboxMemory, body: Record<string, unknown> = {}) => createOrder(m.ctx, parseRequest(orderBody, { amount: 50_000, currency: 'INR', receipt: `r${m.ctx.state.orders.size}`, notes: { order_id: `o${m.ctx.state.orders.size}` }, ...body }));

test('when one order is paid in a sandbox of 20,000 orders, then the next save writes that order\'s entities, not the state, and a restart restores everything', async () => {
  const file = newFile();
  const m = newMemory();
  const control = createSandboxControl(m.ctx, m.book);
  const account = await control.createLinkedAccount({ name: 'Dosa Corner' });
  const journal = openSandboxJournal(file, m, quiet);
  const ids: string[] = [];
  for (let i = 0; i < 20_000; i++) {
    const placed = order(m, { transfers: [{ account, amount: 40_000, notes: { vendor: 'v1' } }] });
    if (i % 2 === 0) payOrder(m.ctx, placed.id);
    ids.push(placed.id);
  }
  journal.flush();
  const stateBytes = fs.statSync(file).size;
  expect(stateBytes).toBeGreaterThan(20 * 1024 * 1024);

  const unpaid = ids[1]!;
  const written = bytesWrittenBy(file, () => {
    payOrder(m.ctx, unpaid);
    journal.flush();
  });
  // The order, its payment and its book, the order transfer it ran (and which payment ran it), the
  // linked account's and the platform's balances, the commit line.
  const payment = [...m.ctx.state.payments.values()].find((p) => p.order_id === unpaid)!;
  const changed = JSON.stringify([m.ctx.state.orders.get(unpaid), payment, m.ctx.state.paymentBooks.get(payment.id), m.ctx.state.orders.get(unpaid)!.transfers]).length;
  expect(written).toBeGreaterThan(changed);
  expect(written).toBeLessThan(2 * changed + 1024);
  expect(written * 1000).toBeLessThan(stateBytes);
  // Nothing changed: nothing written.
  expect(bytesWrittenBy(file, () => journal.flush())).toBe(0);

  journal.close();
  expectSame(dump(reopened(file)), dump(m));
});

test('when the sandbox goes through every kind of change with saves in between, then a restart from its file gives the same state', async () => {
  const file = newFile();
  const m = newMemory();
  const { ctx, book } = m;
  const control = createSandboxControl(ctx, book);
  const journal = openSandboxJournal(file, m, quiet);
  // After every change the file alone must give the same state: a change that no save wrote shows
  // at its own step, before a later change to the same entity writes it anyway.
  const step = async <T>(change: () => T | Promise<T>): Promise<T> => {
    const result = await change();
    journal.flush();
    expectSame(dump(reopened(file)), dump(m));
    return result;
  };
  const noonIst = (date: string) => Date.parse(`${date}T06:30:00Z`);
  const paymentOf = (orderId: string) => [...ctx.state.payments.values()].find((p) => p.order_id === orderId)!;
  /** As the routes do: claim the key (a save may come while the request is in flight), then answer. */
  const answered = async <T>(store: IdempotencyStore, key: string, body: unknown, create: () => T): Promise<T> => {
    const claim = await step(() => store.claim(key, body));
    return step(() => {
      const entity = create();
      if (claim.kind === 'new') claim.complete({ status: 200, body: structuredClone(entity) });
      return entity;
    });
  };

  const a = await step(() => control.createLinkedAccount({ name: 'Idli House' }));
  const b = await step(() => control.createLinkedAccount({ name: 'Chai Point' }));
  await step(() => control.setClock(noonIst('2031-01-09')));
  const withTransfers = await step(() => order(m, { transfers: [{ account: a, amount: 20_000 }, { account: b, amount: 10_000 }] }));
  await step(() => payOrder(ctx, withTransfers.id));
  const [failing] = ctx.state.orders.get(withTransfers.id)!.transfers!;
  await step(() => processPendingTransfers(ctx, [failing!.id]));
  await step(() => retryFailedTransfers(ctx));

  const authorisedOnly = await step(() => order(m));
  const authorised = await step(() => payOrder(ctx, authorisedOnly.id, { capture: false }));
  await step(() => captureByApi(ctx, authorised.id, authorised.amount, 'INR'));
  const failed = await step(() => failPayment(ctx, order(m).id));
  await step(() => lateAuthorize(ctx, failed.id));

  const paid = await step(() => payOrder(ctx, order(m).id));
  const [paymentTransfer] = await step(() => createPaymentTransfers(ctx, paid, [parseRequest(directTransferBody, { account: a, amount: 15_000 })]));
  await step(() => processPendingTransfers(ctx));
  await step(() => reverseTransfer(ctx, paymentTransfer!.id, { amount: 5_000, notes: {} }));
  const refund = await answered(ctx.refundIdempotency, 'refund-key-0001', { amount: 10_000 }, () => {
    const created = createRefund(ctx, paid.id, parseRequest(refundBody, { amount: 10_000, receipt: 'rfnd-1', reverse_all: 1 }));
    ctx.state.refundIdempotencyKeys.set(created.id, 'refund-key-0001');
    return created;
  });
  await step(() => processRefund(ctx, refund));
  await step(() => createRefund(ctx, paymentOf(withTransfers.id).id, parseRequest(refundBody, { reverse_all: true })));

  await answered(ctx.idempotency, 'direct-1', { account: b }, () => {
    const created = createDirectTransfer(ctx, parseRequest(directTransferBody, { account: b, amount: 7_000 }));
    ctx.state.transferIdempotencyKeys.set(created.id, 'direct-1');
    return created;
  });
  await step(() => ctx.idempotency.claim('still-in-flight', { account: a }));
  await step(() => processPendingTransfers(ctx));

  await step(() => control.setLinkedAccountStatus(b, 'suspended'));
  await step(() => control.setLinkedAccountBalance(a, 1_234));
  await step(() => control.putOnHold(authorised.id));
  await step(() => control.injectAdjustment({ amountPaise: -500, description: 'chargeback fee', date: '2031-01-13' }));
  await step(() => control.setClock(noonIst('2031-01-14')));
  const [withLateUtr] = await step(() => runSettlements(ctx, book, { date: '2031-01-13', utrDelayMs: 60_000 }));
  await step(() => runSettlements(ctx, book, { date: '2031-01-14' }));
  await step(() => control.setClock(noonIst('2031-01-15')));
  expect((await step(() => fetchSettlement(ctx, withLateUtr!.id))).utr).not.toBeNull();
  await step(() => control.setPlatformBalance(77_777_777));
  expect(book.rowsByDate.size).toBe(2);
  expect(book.bankLines.length).toBeGreaterThan(0);
  expect(ctx.state.reversals.size).toBeGreaterThan(0);
  expect(ctx.state.transferRetries.size).toBe(1);

  journal.close();
  const restored = reopened(file);
  expectSame(dump(restored), dump(m));
  // An order's transfers are the transfer entities again, so a status change shows on the order.
  expect(restored.ctx.state.orders.get(withTransfers.id)!.transfers![0]).toBe(restored.ctx.state.transfers.get(failing!.id));

  // A reset is saved too, and the world after it.
  const again = openSandboxJournal(file, restored, quiet);
  await createSandboxControl(restored.ctx, restored.book).reset();
  payOrder(restored.ctx, order(restored).id);
  again.close();
  expect(dump(reopened(file))).toBe(dump(restored));
});

test('when the last save was cut short, then loading keeps the saves before it and the next saves append after them', () => {
  const file = newFile();
  const m = newMemory();
  const journal = openSandboxJournal(file, m, quiet);
  const kept = order(m);
  journal.close();
  const committed = dump(m);
  // A crash in the middle of a save: one whole record of it, then half a line.
  fs.appendFileSync(file, `${JSON.stringify({ op: 'put', in: 'orders', key: 'order_Crashed0000001', value: { ...kept, id: 'order_Crashed0000001' } })}\n{"op":"put","in":"ord`);

  const restored = newMemory();
  const reopenedJournal = openSandboxJournal(file, restored, quiet);
  expect(dump(restored)).toBe(committed);
  payOrder(restored.ctx, kept.id);
  reopenedJournal.close();
  expect(fs.readFileSync(file, 'utf8')).not.toContain('Crashed');
  expect(dump(reopened(file))).toBe(dump(restored));
});

test('when a line before the last commit is not a record, then the file is set aside and the sandbox starts empty', () => {
  const file = newFile();
  const m = newMemory();
  const journal = openSandboxJournal(file, m, quiet);
  order(m);
  journal.flush();
  order(m);
  journal.close();
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines[2] = '{"op":"put","in":"nowhere","key":"x","value":1}';
  fs.writeFileSync(file, lines.join('\n'));
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    const fresh = newMemory();
    const empty = dump(newMemory());
    const opened = openSandboxJournal(file, fresh, quiet);
    expect(opened.restored).toBe(false);
    opened.close();
    expect(dump(fresh)).toBe(empty);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith(`${path.basename(file)}.unreadable-`))).toHaveLength(1);
  } finally {
    stderr.mockRestore();
  }
});

test('when a state file of the previous format is there, then it is loaded, rewritten as a journal, and the sandbox carries on', () => {
  const file = newFile();
  const m = newMemory();
  const account = m.ctx.state.accounts.set('acc_Vendor00000001', { id: 'acc_Vendor00000001', name: 'Vendor', status: 'activated', balance: 0 }) && 'acc_Vendor00000001';
  payOrder(m.ctx, order(m, { transfers: [{ account, amount: 30_000 }] }).id);
  processPendingTransfers(m.ctx);
  m.ctx.idempotency.claim('legacy-key', {});
  // The previous format, as persistence.ts wrote it: one object, Maps and Sets tagged.
  const legacy = JSON.stringify(
    { version: 1, clockOffsetMs: m.ctx.clock.offset(), state: { ...m.ctx.state }, book: { ...m.book }, idempotency: [...m.ctx.idempotency.entries], refundIdempotency: [] },
    (_key, value: unknown) => (value instanceof Map ? { __map: [...value] } : value instanceof Set ? { __set: [...value] } : value),
  );
  fs.writeFileSync(file, legacy, { mode: 0o644 });

  const migrated = reopened(file);
  expect(dump(migrated)).toBe(dump(m));
  expect(fs.readFileSync(file, 'utf8').startsWith('{"journal":"razorpay-sandbox","version":2}\n')).toBe(true);
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  expect(dump(reopened(file))).toBe(dump(m));
});

test('when a new state file is made, then only its owner can read it', () => {
  const file = newFile();
  openSandboxJournal(file, newMemory(), quiet).close();
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
});

test('when the file holds twice the records the live state needs, then the next save starts a rewrite that brings it back to the live state', async () => {
  const file = newFile();
  const m = newMemory();
  const journal = openSandboxJournal(file, m, { ...quiet, sliceChars: 4_000, compactAtMultiple: 2, compactMinRecords: 500 });
  const ids = Array.from({ length: 300 }, () => order(m).id);
  journal.flush();
  const live = fs.statSync(file).size;
  const rewrite = `${file}.rewrite`;
  const writeEveryOrderOver = () => {
    for (const id of ids) m.ctx.state.orders.markChanged(id);
    journal.flush();
  };
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  writeEveryOrderOver();
  await nextTurn();
  expect(fs.existsSync(rewrite)).toBe(false);
  writeEveryOrderOver();
  await nextTurn();
  expect(fs.existsSync(rewrite)).toBe(true);
  const beforeRewrite = fs.statSync(file).size;
  let turns = 0;
  for (; fs.existsSync(rewrite); turns++) await nextTurn();
  // In slices of 4,000 characters, one a turn of the event loop.
  expect(turns).toBeGreaterThan(20);
  expect(fs.statSync(file).size).toBeLessThan(beforeRewrite / 2);
  expect(fs.statSync(file).size).toBeLessThan(live * 1.1);
  journal.close();
  expect(dump(reopened(file))).toBe(dump(m));
});

test('when the sandbox changes while its file is rewritten, then the new file has those changes too', async () => {
  const file = newFile();
  const m = newMemory();
  const journal = openSandboxJournal(file, m, { ...quiet, sliceChars: 4_000, compactMinRecords: Infinity });
  const ids = Array.from({ length: 300 }, () => order(m).id);
  journal.flush();
  let installed = false;
  const compacted = journal.compact().then(() => { installed = true; });
  let turns = 0;
  let placedMeanwhile = '';
  while (!installed) {
    // Saved to the old file while the new one is written: a new order, an order written over, a payment.
    placedMeanwhile = order(m).id;
    m.ctx.state.orders.markChanged(ids[turns]!);
    if (turns % 5 === 0) payOrder(m.ctx, ids[turns]!);
    journal.flush();
    turns += 1;
    await new Promise((resolve) => setImmediate(resolve));
  }
  await compacted;
  expect(turns).toBeGreaterThan(5);
  // A change after the switch goes to the new file.
  const afterSwitch = order(m).id;
  journal.close();
  const restored = reopened(file);
  expect(restored.ctx.state.orders.has(placedMeanwhile)).toBe(true);
  expect(restored.ctx.state.orders.has(afterSwitch)).toBe(true);
  expect(dump(restored)).toBe(dump(m));
});

test('when a field is added to the sandbox state or the settlement book, then the state file keeps it (or says why not)', () => {
  const kept = new Set<string>([...Object.keys(KEYED), ...Object.keys(MEMBERS), ...Object.keys(LISTS), ...Object.keys(LISTS_BY_KEY), ...Object.keys(NUMBERS)]);
  const notKept = ['initialPlatformBalance'];
  for (const field of [...Object.keys(new SandboxState(0)), ...Object.keys(new SettlementBook())]) {
    expect(kept.has(field) || notKept.includes(field) ? field : `${field} is not in persistence/collections.ts`).toBe(field);
  }
});
