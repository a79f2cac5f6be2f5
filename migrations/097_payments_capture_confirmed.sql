-- When Razorpay confirmed the capture an online order was marked paid on (the payment fetched:
-- captured, nothing refunded, the amount we recorded, our gateway order). The money-moving step asks
-- once, before the first transfer of the order's payout (design.md §10), and sets this in the
-- transaction of the send's gate, so a later attempt (a retry, a new run) does not ask again.
-- NULL: not asked yet, or not confirmed (the payout then waits in review, CAPTURE_NOT_CONFIRMED).
ALTER TABLE payments ADD COLUMN capture_confirmed_at timestamptz;
