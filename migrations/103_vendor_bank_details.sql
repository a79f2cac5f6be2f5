-- Vendor bank details (issue 20 item 2): where finance pays a vendor by bank bulk payment. The
-- account number is stored only encrypted with AES-256-GCM (src/banking/keyring.ts; the associated
-- data binds the ciphertext to its vendor, so a row copied to another vendor does not decrypt),
-- under the key named by key_id (per row, so keys rotate), and masked for display. Nothing here or
-- in the change log can hold the plaintext: the masked column admits only XXXXXX and four digits.
CREATE TABLE vendor_bank_details (
  vendor_id          text PRIMARY KEY REFERENCES vendors(id),
  beneficiary_name   text NOT NULL CHECK (beneficiary_name ~ '^[A-Za-z0-9 .&''-]{1,100}$'),
  ifsc               text NOT NULL CHECK (ifsc ~ '^[A-Z]{4}0[A-Z0-9]{6}$'),
  account_ciphertext bytea NOT NULL CHECK (length(account_ciphertext) > 0),
  account_iv         bytea NOT NULL CHECK (length(account_iv) = 12),
  account_auth_tag   bytea NOT NULL CHECK (length(account_auth_tag) = 16),
  key_id             text NOT NULL CHECK (key_id ~ '^[A-Za-z0-9_-]{1,32}$'),
  account_masked     text NOT NULL CHECK (account_masked ~ '^X{6}[0-9]{4}$'),
  created_at         timestamptz NOT NULL DEFAULT now(),
  created_by         text NOT NULL,
  -- When the details (not the key they are encrypted under) last changed, and by whom: a
  -- settlement batch frozen before this must not be paid to the new account.
  updated_at         timestamptz NOT NULL DEFAULT now(),
  updated_by         text NOT NULL,
  key_rotated_at     timestamptz
);
-- Rotation finds the rows still under an older key.
CREATE INDEX vendor_bank_details_key ON vendor_bank_details (key_id);

-- Every change, append-only, masked only: set (first time), change, rotate_key (re-encrypted under
-- another key; the details are the same).
CREATE TABLE vendor_bank_detail_changes (
  id               bigserial PRIMARY KEY,
  vendor_id        text NOT NULL REFERENCES vendors(id),
  action           text NOT NULL CHECK (action IN ('set', 'change', 'rotate_key')),
  actor            text NOT NULL,
  beneficiary_name text NOT NULL,
  ifsc             text NOT NULL,
  account_masked   text NOT NULL CHECK (account_masked ~ '^X{6}[0-9]{4}$'),
  key_id           text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX vendor_bank_detail_changes_vendor ON vendor_bank_detail_changes (vendor_id, id);
CREATE TRIGGER vendor_bank_detail_changes_append_only BEFORE UPDATE OR DELETE ON vendor_bank_detail_changes
  FOR EACH ROW EXECUTE FUNCTION refuse_change();
