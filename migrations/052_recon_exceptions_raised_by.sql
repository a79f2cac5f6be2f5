-- Who raised an exception: a recon run (`recon`, cleared by a later run of its window that no longer
-- finds it) or a gateway event (`event`: a dispute, a capture that does not match its order). A run
-- never finds an event's exception, so it must never clear one; only the event flow or a human
-- (resolve) closes it. `first_run_id`/`last_run_id` of an event exception name the event.
ALTER TABLE recon_exceptions ADD COLUMN raised_by text NOT NULL DEFAULT 'recon' CHECK (raised_by IN ('recon', 'event'));
