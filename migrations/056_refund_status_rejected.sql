-- A refund the gateway refused for good (not a transient code) is `rejected`: the customer's money is
-- still with us. It is the ops queue (GET /ops/refunds?status=rejected) and a recon exception.
-- `failed` stays what Razorpay's refund.failed says about a refund it had accepted.
ALTER TABLE refunds DROP CONSTRAINT refunds_status_check;
ALTER TABLE refunds ADD CONSTRAINT refunds_status_check
  CHECK (status IN ('requested', 'rejected', 'pending', 'processed', 'failed'));
