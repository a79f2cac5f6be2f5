-- The linked account the Razorpay order's Route split goes to, fixed at checkout: the split is part
-- of the gateway order, so a later change of the vendor's account does not move it.
ALTER TABLE orders ADD COLUMN split_linked_account_id text CHECK (split_linked_account_id ~ '^acc_[A-Za-z0-9]{14}$');
ALTER TABLE orders ADD CONSTRAINT orders_split_has_account
  CHECK ((split_transfer_paise IS NULL) = (split_linked_account_id IS NULL));
