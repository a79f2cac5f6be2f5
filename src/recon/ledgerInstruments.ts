/** What the ledger says pays by a transfer of ours, as recon asks it (issue 36): the live discharge
 * (in flight or paid) of a payout's transfer, or of an order's Route split, with the transfer id it
 * names. The one lookup the loader (repository.ts) and the SQL matcher (matchInDatabase.ts) share, so
 * the two judge a transfer by the same fact: no live discharge, no transfer of ours should have left. */

import { PROVIDER_TRANSFER_KINDS } from '../ledger/model';

/** The payout's latest live transfer discharge (an order's or a batch's); `payoutId` is an SQL uuid expression. */
export const payoutDischargeSql = (payoutId: string): string =>
  `SELECT d.state, d.provider_ref FROM ledger_discharges d
    WHERE d.payout_id = ${payoutId} AND d.kind IN (${PROVIDER_TRANSFER_KINDS.map((k) => `'${k}'`).join(', ')}) AND d.state IN ('in_flight', 'paid')
    ORDER BY d.id DESC LIMIT 1`;

/** The split's live discharge of the order's net; `orderId` is an SQL text expression. */
export const splitDischargeSql = (orderId: string): string =>
  `SELECT d.state, d.provider_ref FROM ledger_obligations o
     JOIN ledger_discharge_items i ON i.obligation_id = o.id AND i.active JOIN ledger_discharges d ON d.id = i.discharge_id
    WHERE o.source = 'order:' || ${orderId} AND d.kind = 'split' AND d.state IN ('in_flight', 'paid') LIMIT 1`;
