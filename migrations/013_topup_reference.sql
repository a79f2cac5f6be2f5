-- A retried top-up request with the same client reference returns the same top-up.
ALTER TABLE wallet_topups ADD COLUMN client_reference text UNIQUE;
