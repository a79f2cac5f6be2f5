/** Entity snapshots exactly as Razorpay serialises them: every field the reference lists, in its
 * order, with `[]` for empty notes. Fee models are the sandbox's choice (documented here):
 * - payment fee: 2% of the amount, GST (18%) included: fee = round(2%), tax = round(fee × 18/118);
 * - transfer fee: 0.25% + 18% GST, at least 1 paisa: base = ceil(0.25%), tax = round(base × 18%),
 *   fees = base + tax (₹1 → 1 paisa as in the docs sample; ₹1000 → 295, the sample shows 296). */
import { newId } from './ids';

export type NotesJson = Record<string, string> | [];

export interface OrderEntity {
  id: string; entity: 'order'; amount: number; amount_paid: number; amount_due: number; currency: string;
  receipt: string | null; offer_id: null; status: 'created' | 'attempted' | 'paid'; attempts: number;
  notes: NotesJson; created_at: number; transfers?: TransferEntity[];
}

export interface PaymentEntity {
  id: string; entity: 'payment'; amount: number; currency: string; base_amount: number;
  status: 'created' | 'authorized' | 'captured' | 'refunded' | 'failed';
  order_id: string | null; invoice_id: null; international: boolean; method: string;
  amount_refunded: number; amount_transferred: number; refund_status: 'partial' | 'full' | null; captured: boolean;
  description: string | null; card_id: string | null; card: Record<string, unknown> | null; bank: string | null;
  wallet: string | null; vpa: string | null; email: string; contact: string; notes: NotesJson;
  fee: number | null; tax: number | null; error_code: string | null; error_description: string | null;
  error_source: string | null; error_step: string | null; error_reason: string | null;
  acquirer_data: Record<string, string | null>; token_id: string | null; created_at: number;
}

export interface TransferError {
  code: string | null; description: string | null; reason: string | null; field: string | null;
  step: string | null; id: string; source: string | null; metadata: null;
}

export interface TransferEntity {
  id: string; entity: 'transfer'; status: 'created' | 'pending' | 'processed' | 'failed' | 'reversed' | 'partially_reversed';
  source: string; recipient: string; amount: number; currency: string; amount_reversed: number;
  fees: number; tax: number | null; notes: NotesJson; linked_account_notes: string[]; on_hold: boolean;
  on_hold_until: number | null; settlement_status: 'pending' | 'on_hold' | 'settled' | null;
  recipient_settlement_id: string | null; created_at: number; processed_at: number | null; error: TransferError;
}

export interface RefundEntity {
  id: string; entity: 'refund'; amount: number; currency: string; payment_id: string; notes: NotesJson;
  receipt: string | null; acquirer_data: { arn: string | null }; created_at: number; batch_id: null;
  status: 'pending' | 'processed' | 'failed'; speed_processed: string; speed_requested: string;
}

export interface ReversalEntity {
  id: string; entity: 'reversal'; transfer_id: string; amount: number; fee: number; tax: number; currency: string;
  notes: NotesJson; initiator_id: string | null; customer_refund_id: string | null; utr: string | null; created_at: number;
}

export interface SettlementEntity {
  id: string; entity: 'settlement'; amount: number; status: 'created' | 'processed' | 'failed';
  fees: number; tax: number; utr: string | null; created_at: number;
}

export function notesJson(notes: Record<string, string> | undefined | null): NotesJson {
  return notes && Object.keys(notes).length > 0 ? { ...notes } : [];
}

export function paymentFee(amount: number): { fee: number; tax: number } {
  const fee = Math.round((amount * 2) / 100);
  return { fee, tax: Math.round((fee * 18) / 118) };
}

export function transferFee(amount: number): { fees: number; tax: number } {
  const base = Math.max(1, Math.ceil((amount * 25) / 10000));
  const tax = Math.round((base * 18) / 100);
  return { fees: base + tax, tax };
}

export function noTransferError(id: string): TransferError {
  return { code: null, description: null, reason: null, field: null, step: null, id, source: null, metadata: null };
}

export function newOrder(input: { amount: number; currency: string; receipt: string | null; notes: NotesJson; createdAt: number }): OrderEntity {
  return {
    id: newId('order'), entity: 'order', amount: input.amount, amount_paid: 0, amount_due: input.amount, currency: input.currency,
    receipt: input.receipt, offer_id: null, status: 'created', attempts: 0, notes: input.notes, created_at: input.createdAt,
  };
}

export function newTransfer(input: {
  source: string; recipient: string; amount: number; notes: NotesJson; linkedAccountNotes?: string[]; onHold?: boolean;
  onHoldUntil?: number | null; status: TransferEntity['status']; createdAt: number;
}): TransferEntity {
  const id = newId('trf');
  // Order transfers that have not run yet carry fees 0 and tax null (documented samples).
  const { fees, tax } = input.status === 'created' ? { fees: 0, tax: null } : transferFee(input.amount);
  return {
    id, entity: 'transfer', status: input.status, source: input.source, recipient: input.recipient, amount: input.amount,
    currency: 'INR', amount_reversed: 0, fees, tax, notes: input.notes, linked_account_notes: input.linkedAccountNotes ?? [],
    on_hold: input.onHold ?? false, on_hold_until: input.onHoldUntil ?? null, settlement_status: null,
    recipient_settlement_id: null, created_at: input.createdAt, processed_at: null, error: noTransferError(id),
  };
}

/** The acquirer fields Razorpay shows per method (card: auth code + RRN; netbanking: bank txn id; UPI: RRN). */
function acquirerDataShape(method: string): Record<string, string | null> {
  if (method === 'card') return { auth_code: null, rrn: null };
  if (method === 'netbanking') return { bank_transaction_id: null };
  if (method === 'upi') return { rrn: null };
  return {};
}

const TEST_CARD = { entity: 'card', name: 'Gaurav Kumar', last4: '1111', network: 'Visa', type: 'debit', issuer: null, international: false, emi: false, iin: '411111', sub_type: 'consumer' };

export function newPayment(input: { amount: number; orderId: string | null; method: string; createdAt: number; notes?: NotesJson }): PaymentEntity {
  const isCard = input.method === 'card';
  const cardId = isCard ? newId('card') : null;
  return {
    id: newId('pay'), entity: 'payment', amount: input.amount, currency: 'INR', base_amount: input.amount, status: 'created',
    order_id: input.orderId, invoice_id: null, international: false, method: input.method, amount_refunded: 0,
    amount_transferred: 0, refund_status: null, captured: false, description: null, card_id: cardId,
    card: isCard ? { id: cardId, ...TEST_CARD } : null, bank: input.method === 'netbanking' ? 'HDFC' : null,
    wallet: input.method === 'wallet' ? 'paytm' : null, vpa: input.method === 'upi' ? 'gaurav.kumar@exampleupi' : null,
    email: 'gaurav.kumar@example.com', contact: '+919000090000', notes: input.notes ?? [], fee: null, tax: null,
    error_code: null, error_description: null, error_source: null, error_step: null, error_reason: null,
    acquirer_data: acquirerDataShape(input.method), token_id: null, created_at: input.createdAt,
  };
}

/** The sandbox charges no fee for a reversal (the documented samples show `fee: 0`). */
export function newReversal(input: { transferId: string; amount: number; notes: NotesJson; initiatorId: string; customerRefundId: string | null; createdAt: number }): ReversalEntity {
  return {
    id: newId('rvrsl'), entity: 'reversal', transfer_id: input.transferId, amount: input.amount, fee: 0, tax: 0, currency: 'INR',
    notes: input.notes, initiator_id: input.initiatorId, customer_refund_id: input.customerRefundId, utr: null, created_at: input.createdAt,
  };
}

export function newRefund(input: { amount: number; paymentId: string; notes: NotesJson; receipt: string | null; speed: string; createdAt: number }): RefundEntity {
  return {
    id: newId('rfnd'), entity: 'refund', amount: input.amount, currency: 'INR', payment_id: input.paymentId, notes: input.notes,
    receipt: input.receipt, acquirer_data: { arn: null }, created_at: input.createdAt, batch_id: null, status: 'pending',
    speed_processed: 'normal', speed_requested: input.speed,
  };
}
