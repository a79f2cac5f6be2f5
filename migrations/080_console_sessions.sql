-- Console sign-in sessions (src/console/session.ts): a browser signs in with an API key and gets a
-- random 256-bit token in an HttpOnly cookie; only its SHA-256 is kept. The session is bound to the
-- key: every request re-reads the key, so revoking the key ends its sessions on the next request.
CREATE TABLE console_sessions (
  token_sha256 text PRIMARY KEY,                       -- hex SHA-256 of the cookie's token
  key_id       text NOT NULL REFERENCES api_keys (id),
  person       text,                                   -- the name typed at sign-in (the X-Actor equivalent)
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  revoked_at   timestamptz,                            -- sign-out, or the key found revoked
  CHECK (expires_at > created_at)
);
CREATE INDEX console_sessions_key ON console_sessions (key_id) WHERE revoked_at IS NULL;
