/** The in-process control surface (src/sandbox/control.ts), over the sandbox's state. */
import type { SandboxContext } from './context';
import type { LinkedAccountStatus, SandboxControl } from './control';
import { ACCOUNT_ID, newId } from './ids';
import { capturedPaymentWithoutOrder, failPayment, fetchPayment, lateAuthorize, payOrder } from './checkout';
import { processPendingTransfers, retryFailedTransfers, reversalsOf, reverseTransfer } from './transfers';
import { bankStatementCsv, runSettlements, type SettlementBook } from './settlements';
import { assertIsoDate } from '../domain/calendar';
import type { RzpPayment, RzpRefund, RzpReversal, RzpSettlement, RzpTransfer } from '../gateway/types';

const copy = <T>(v: unknown): T => structuredClone(v) as T;

export interface SandboxControlExtras {
  /** The linked accounts the sandbox knows. */
  linkedAccounts(): Promise<Array<{ id: string; name: string; status: LinkedAccountStatus }>>;
  /** Checkout that stops at `authorized` (the merchant must capture). */
  authorizeOrder(orderId: string, opts?: { method?: string }): Promise<RzpPayment>;
  /** The X-Transfer-Idempotency header the transfer was created under, as the sandbox received it. */
  idempotencyKeyOf(transferId: string): Promise<string | null>;
  /** The X-Refund-Idempotency header the refund was created under, as the sandbox received it. */
  refundIdempotencyKeyOf(refundId: string): Promise<string | null>;
  /** What processed transfers put in the linked account, less what reversals took back (paise). */
  linkedAccountBalance(accountId: string): Promise<number>;
  /** Sets it, e.g. to model the linked account's own settlement having paid part of it out. */
  setLinkedAccountBalance(accountId: string, paise: number): Promise<void>;
  /** The reversals of a transfer (from the provider's side). */
  reversals(transferId: string): Promise<RzpReversal[]>;
}

export function createSandboxControl(ctx: SandboxContext, book: SettlementBook): SandboxControl & SandboxControlExtras {
  const { state, webhooks, faults, clock } = ctx;
  return {
    async createLinkedAccount(opts = {}) {
      const id = opts.id ?? newId('acc');
      if (!ACCOUNT_ID.test(id)) throw new Error(`a linked account id is acc_ + 14 alphanumerics, got ${id}`);
      state.accounts.set(id, { id, name: opts.name ?? `Vendor ${id.slice(4, 8)}`, status: opts.status ?? 'activated', balance: 0 });
      return id;
    },
    async setLinkedAccountStatus(accountId, status) {
      const account = state.accounts.get(accountId);
      if (!account) throw new Error(`unknown linked account ${accountId}`);
      account.status = status;
      state.accounts.markChanged(accountId);
    },
    async linkedAccounts() {
      return [...state.accounts.values()].map(({ id, name, status }) => ({ id, name, status }));
    },
    async refundIdempotencyKeyOf(refundId) {
      return state.refundIdempotencyKeys.get(refundId) ?? null;
    },
    async linkedAccountBalance(accountId) {
      const account = state.accounts.get(accountId);
      if (!account) throw new Error(`unknown linked account ${accountId}`);
      return account.balance;
    },
    async setLinkedAccountBalance(accountId, paise) {
      const account = state.accounts.get(accountId);
      if (!account) throw new Error(`unknown linked account ${accountId}`);
      if (!Number.isSafeInteger(paise) || paise < 0) throw new Error('balance must be non-negative integer paise');
      account.balance = paise;
      state.accounts.markChanged(accountId);
    },
    async reversals(transferId) {
      return copy<RzpReversal[]>(reversalsOf(ctx, transferId));
    },
    async retryFailedTransfers(opts = {}) {
      return copy<RzpTransfer[]>(retryFailedTransfers(ctx, opts));
    },
    async setRateLimit(settings) {
      ctx.rateLimit.configure(settings);
    },
    async setPlatformBalance(paise) {
      if (!Number.isSafeInteger(paise)) throw new Error('balance must be integer paise');
      state.platformBalance = paise;
    },
    async platformBalance() {
      return state.platformBalance;
    },

    async payOrder(orderId, opts) {
      return copy<RzpPayment>(payOrder(ctx, orderId, opts));
    },
    async authorizeOrder(orderId, opts) {
      return copy<RzpPayment>(payOrder(ctx, orderId, { ...opts, capture: false }));
    },
    async idempotencyKeyOf(transferId) {
      return state.transferIdempotencyKeys.get(transferId) ?? null;
    },
    async failPayment(orderId) {
      return copy<RzpPayment>(failPayment(ctx, orderId));
    },
    async lateAuthorize(paymentId) {
      return copy<RzpPayment>(lateAuthorize(ctx, paymentId));
    },
    async capturedPaymentWithoutOrder(amountPaise) {
      return copy<RzpPayment>(capturedPaymentWithoutOrder(ctx, amountPaise));
    },

    async setWebhookTarget(url) {
      webhooks.setTarget(url);
    },
    async setWebhookDelivery(enabled) {
      webhooks.setEnabled(enabled);
    },
    async injectWebhookFault(fault, opts) {
      webhooks.addFault(fault, opts);
    },
    async webhookEvents() {
      return webhooks.records.map((r) => ({ ...r }));
    },
    async drainWebhooks(timeoutMs = 10_000) {
      // Effects queued "at once" (refund processing without a delay) emit their events first.
      const deadline = Date.now() + timeoutMs;
      while (ctx.timers.immediatePending() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
      await webhooks.drain(Math.max(1, deadline - Date.now()));
    },

    async injectFault(rule) {
      faults.add(rule);
    },
    async clearFaults() {
      faults.clear();
    },
    async callCounts() {
      return faults.callCounts();
    },
    async callPathCounts() {
      return faults.pathCounts();
    },
    async faultsFired() {
      return { ...faults.firedCounts(), ...webhooks.fired };
    },

    async transfers(filter = {}) {
      return copy<RzpTransfer[]>([...state.transfers.values()].filter((t) => !filter.recipient || t.recipient === filter.recipient));
    },
    async refunds() {
      return copy<RzpRefund[]>([...state.refunds.values()]);
    },
    async processPendingTransfers(opts = {}) {
      processPendingTransfers(ctx, opts.fail);
    },
    async reverseTransferFromDashboard(transferId, opts = {}) {
      return copy<RzpReversal>(reverseTransfer(ctx, transferId, { amount: opts.amountPaise, notes: opts.notes ?? {} }));
    },

    async now() {
      return clock.nowMs();
    },
    async setClock(unixMs) {
      clock.set(unixMs);
    },
    async runSettlements(opts) {
      assertIsoDate(opts.date);
      return copy<RzpSettlement[]>(runSettlements(ctx, book, opts));
    },
    async injectAdjustment(opts) {
      assertIsoDate(opts.date);
      if (!Number.isSafeInteger(opts.amountPaise) || opts.amountPaise === 0) throw new Error('adjustment must be non-zero integer paise');
      state.adjustments.push({ id: newId('adj'), amount: opts.amountPaise, description: opts.description, date: opts.date, createdAt: clock.nowSec() });
    },
    async putOnHold(paymentId) {
      fetchPayment(ctx, paymentId);
      const b = state.paymentBooks.get(paymentId) ?? { capturedAt: null, onHold: false };
      state.paymentBooks.set(paymentId, { ...b, onHold: true });
    },
    async bankStatementCsv(opts) {
      assertIsoDate(opts.from);
      assertIsoDate(opts.to);
      return bankStatementCsv(book, opts);
    },
    async reset() {
      ctx.timers.clear();
      state.reset();
      webhooks.reset();
      faults.reset();
      ctx.rateLimit.reset();
      ctx.idempotency.reset();
      ctx.refundIdempotency.reset();
      book.reset();
      clock.set(null);
    },
  };
}
