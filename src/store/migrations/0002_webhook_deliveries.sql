-- Webhook delivery attempts (contract section 13, GET /v1/webhooks/{id}/deliveries): every
-- attempt the delivery worker makes, with its outcome, so an endpoint's owner can see why an
-- event did or did not arrive. Rows are only ever inserted.
CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  mode text NOT NULL CHECK (mode IN ('test', 'live')),
  endpoint_id text NOT NULL REFERENCES webhook_endpoints (id),
  event_id text NOT NULL REFERENCES outbox_events (id),
  event_type text NOT NULL,
  attempt integer NOT NULL CHECK (attempt >= 1),
  succeeded boolean NOT NULL,
  status_code integer CHECK (status_code BETWEEN 100 AND 599),
  duration_ms integer NOT NULL CHECK (duration_ms >= 0),
  error text CHECK (length(error) <= 500),
  created_at timestamptz NOT NULL
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC);

-- Why an endpoint stopped receiving: deleted by its owner, or disabled by a 410 answer.
ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason text;
