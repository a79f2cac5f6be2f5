-- The trace an outbox row continues (issue 39): the W3C traceparent of the span that wrote it (the
-- webhook request that marked the order paid), so the drainer's workflow start, the run and its
-- Razorpay calls join that order's trace. NULL when tracing is off or the writer had no span.
ALTER TABLE payouts_outbox ADD COLUMN traceparent text CHECK (traceparent ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');
