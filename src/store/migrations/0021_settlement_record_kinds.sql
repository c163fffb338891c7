-- A clearing batch's record may be any of the network's capture kinds (contract v1.2, section
-- 16; issue 34): a capture of an authorization (as before, with `final`), a force capture or a
-- refund. A force capture or refund names no authorization: it carries the message as the
-- network sent it (the body of POST /v1/captures or /v1/refunds), parsed when it is posted,
-- as a capture's amount is.
ALTER TABLE settlement_records
  ADD COLUMN IF NOT EXISTS kind text NOT NULL DEFAULT 'capture'
    CHECK (kind IN ('capture', 'force_capture', 'refund')),
  ADD COLUMN IF NOT EXISTS final boolean NOT NULL DEFAULT true,
  ADD COLUMN IF NOT EXISTS message jsonb,
  -- The transaction the record posted (the capture's authorization, or the force capture or
  -- refund it recorded): null until posted, and for a failed record.
  ADD COLUMN IF NOT EXISTS transaction_id text;

ALTER TABLE settlement_records ALTER COLUMN authorization_id DROP NOT NULL;

-- NOT VALID: every existing row is a capture with its authorization, so a scan proves nothing.
ALTER TABLE settlement_records ADD CONSTRAINT settlement_records_kind_names_its_target CHECK (
  (kind = 'capture' AND authorization_id IS NOT NULL AND message IS NULL)
  OR (kind <> 'capture' AND authorization_id IS NULL AND message IS NOT NULL)) NOT VALID;
