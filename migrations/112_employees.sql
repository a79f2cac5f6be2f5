-- Which employer each employee works for (issue 21 item 10): reference data registered by admin
-- (PUT /v1/admin/employers/:employerId/employees/:employeeId). An employee wallet pays only that
-- employee's orders with that employer, and only a registered employee's wallet is topped up.
-- Nothing is backfilled from orders: the ordering service's word is exactly what this table stops
-- trusting. Register each employee before their next wallet order (docs/production.md).
CREATE TABLE employees (
  id            text PRIMARY KEY,
  employer_id   text NOT NULL REFERENCES employers(id),
  registered_by text NOT NULL,                      -- auditActor of the admin request
  registered_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX employees_by_employer ON employees (employer_id, id);
