-- Employers, vendors (restaurant outlets) and how each pair settles.
CREATE TABLE employers (
  id         text PRIMARY KEY,
  name       text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE vendors (
  id                text PRIMARY KEY,
  name              text NOT NULL,
  -- Razorpay Route linked account; NULL means the vendor is paid offline.
  linked_account_id text CHECK (linked_account_id ~ '^acc_[A-Za-z0-9]{14}$'),
  created_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE employer_vendor (
  employer_id     text NOT NULL REFERENCES employers(id),
  vendor_id       text NOT NULL REFERENCES vendors(id),
  settlement_mode text NOT NULL DEFAULT 'platform_transfer'
                  CHECK (settlement_mode IN ('platform_transfer', 'corporate_direct', 'manual_offline')),
  commission_bps  integer NOT NULL CHECK (commission_bps BETWEEN 0 AND 10000),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (employer_id, vendor_id)
);
