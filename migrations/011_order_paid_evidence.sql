-- How an order became paid (which path won the race) and by what evidence, for audit and support.
ALTER TABLE orders
  ADD COLUMN paid_via        text CHECK (paid_via IN ('webhook', 'callback', 'sweep', 'wallet', 'cash', 'nothing_to_collect')),
  ADD COLUMN paid_payment_id text,
  ADD COLUMN paid_confirmed_by text;
