-- A row written by the foundation's probe workflow: proves worker → activity → PostgreSQL works.
CREATE TABLE system_probes (
  id          bigserial PRIMARY KEY,
  workflow_id text NOT NULL UNIQUE,
  message     text NOT NULL,
  written_at  timestamptz NOT NULL DEFAULT now()
);
