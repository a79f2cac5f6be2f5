/** What the state file keeps of a sandbox, by the name each part has in the file. Four shapes:
 * keyed maps (an entry is written whole when it changes), sets of ids, append-only lists, lists by
 * key (the recon rows of each date), and numbers. Webhook deliveries, faults and timers are not kept
 * (a restart forgets them, as before); neither is the configured initial platform balance. */
import type { SandboxContext } from '../context';
import type { SettlementBook } from '../settlements';
import type { TrackedMap, TrackedSet } from '../tracked';

export interface SandboxMemory {
  ctx: SandboxContext;
  book: SettlementBook;
}

export const KEYED = {
  orders: (m: SandboxMemory) => m.ctx.state.orders,
  payments: (m: SandboxMemory) => m.ctx.state.payments,
  paymentBooks: (m: SandboxMemory) => m.ctx.state.paymentBooks,
  transfers: (m: SandboxMemory) => m.ctx.state.transfers,
  refunds: (m: SandboxMemory) => m.ctx.state.refunds,
  transferIdempotencyKeys: (m: SandboxMemory) => m.ctx.state.transferIdempotencyKeys,
  refundIdempotencyKeys: (m: SandboxMemory) => m.ctx.state.refundIdempotencyKeys,
  orderTransferPayments: (m: SandboxMemory) => m.ctx.state.orderTransferPayments,
  transferRetries: (m: SandboxMemory) => m.ctx.state.transferRetries,
  reversals: (m: SandboxMemory) => m.ctx.state.reversals,
  accounts: (m: SandboxMemory) => m.ctx.state.accounts,
  settlements: (m: SandboxMemory) => m.ctx.state.settlements,
  idempotency: (m: SandboxMemory) => m.ctx.idempotency.entries,
  refundIdempotency: (m: SandboxMemory) => m.ctx.refundIdempotency.entries,
} satisfies Record<string, (m: SandboxMemory) => TrackedMap<string, unknown>>;

/** An idempotency key whose first request is still in progress is not kept: it never answered. */
export const kept = (name: KeyedName, value: unknown): boolean =>
  !(name === 'idempotency' || name === 'refundIdempotency') || (value as { answer: unknown }).answer !== null;

export const MEMBERS = {
  refundReceipts: (m: SandboxMemory) => m.ctx.state.refundReceipts,
  settledIds: (m: SandboxMemory) => m.ctx.state.settledIds,
  reportedOnHold: (m: SandboxMemory) => m.book.reportedOnHold,
} satisfies Record<string, (m: SandboxMemory) => TrackedSet<string>>;

interface ListAccess {
  get(m: SandboxMemory): unknown[];
  replace(m: SandboxMemory, list: unknown[]): void;
}

export const LISTS = {
  settledItems: { get: (m) => m.ctx.state.settledItems, replace: (m, list) => { m.ctx.state.settledItems = list as never; } },
  adjustments: { get: (m) => m.ctx.state.adjustments, replace: (m, list) => { m.ctx.state.adjustments = list as never; } },
  bankLines: { get: (m) => m.book.bankLines, replace: (m, list) => { m.book.bankLines = list as never; } },
} satisfies Record<string, ListAccess>;

export const LISTS_BY_KEY = {
  rowsByDate: (m: SandboxMemory) => m.book.rowsByDate as Map<string, unknown[]>,
} satisfies Record<string, (m: SandboxMemory) => Map<string, unknown[]>>;

interface NumberAccess {
  get(m: SandboxMemory): number;
  set(m: SandboxMemory, value: number): void;
}

export const NUMBERS = {
  platformBalance: { get: (m) => m.ctx.state.platformBalance, set: (m, v) => { m.ctx.state.platformBalance = v; } },
  clockOffsetMs: { get: (m) => m.ctx.clock.offset(), set: (m, v) => m.ctx.clock.setOffset(v) },
} satisfies Record<string, NumberAccess>;

export type KeyedName = keyof typeof KEYED;
export type MembersName = keyof typeof MEMBERS;
export type ListName = keyof typeof LISTS;
export type ListsByKeyName = keyof typeof LISTS_BY_KEY;
export type NumberName = keyof typeof NUMBERS;

export const names = <T extends object>(shape: T): Array<keyof T & string> => Object.keys(shape) as Array<keyof T & string>;

// One type per shape, whatever the entries' type (the file holds JSON).
export const keyedMap = (m: SandboxMemory, name: KeyedName): TrackedMap<string, unknown> => KEYED[name](m) as TrackedMap<string, unknown>;
export const membersOf = (m: SandboxMemory, name: MembersName): TrackedSet<string> => MEMBERS[name](m);
export const listOf = (m: SandboxMemory, name: ListName): unknown[] => LISTS[name].get(m);
export const listsByKey = (m: SandboxMemory, name: ListsByKeyName): Map<string, unknown[]> => LISTS_BY_KEY[name](m);

/** How many records the live state takes in the file (an entry, a member, a list item, a number). */
export function liveRecordCount(m: SandboxMemory): number {
  let n = names(NUMBERS).length;
  for (const name of names(KEYED)) n += keyedMap(m, name).size;
  for (const name of names(MEMBERS)) n += membersOf(m, name).size;
  for (const name of names(LISTS)) n += listOf(m, name).length;
  for (const name of names(LISTS_BY_KEY)) for (const list of listsByKey(m, name).values()) n += list.length;
  return n;
}
