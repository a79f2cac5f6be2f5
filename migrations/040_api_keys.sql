-- API keys: every caller of the API but Razorpay (signed webhooks) and the browser checkout
-- (signed callback) presents one. Only a hash of the secret is kept; the secret is shown once.
-- Role values (ordering, ops, admin, finance, vendor:<id>) are validated by the app (src/auth/roles.ts).
CREATE TABLE api_keys (
  id            text PRIMARY KEY,                     -- the public part of the key (key_…)
  name          text NOT NULL,                        -- who holds it, e.g. ordering-service, ops-asha
  roles         text[] NOT NULL CHECK (cardinality(roles) > 0),
  secret_sha256 text NOT NULL,                        -- hex SHA-256 of the 256-bit random secret
  minted_by     text NOT NULL,                        -- cli:<user>, dev-stack, test
  created_at    timestamptz NOT NULL DEFAULT now(),
  revoked_at    timestamptz,
  revoked_by    text
);

-- A name names one live key at a time, so `revoke NAME` is unambiguous and a rotation is
-- mint (new name) → deploy → revoke (old name).
CREATE UNIQUE INDEX api_keys_live_name ON api_keys (name) WHERE revoked_at IS NULL;
