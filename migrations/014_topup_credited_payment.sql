-- Which captured payment credited a top-up: any other capture on its gateway order is a duplicate
-- charge and is refunded. Earlier credits are attributed to their first recorded capture.
ALTER TABLE wallet_topups ADD COLUMN credited_payment_id text;
UPDATE wallet_topups t SET credited_payment_id = (
  SELECT p.id FROM payments p
   WHERE p.topup_id = t.id AND p.status IN ('captured', 'refunded')
   ORDER BY p.captured_at NULLS LAST, p.created_at LIMIT 1)
 WHERE t.status = 'credited';
