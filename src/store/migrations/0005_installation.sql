-- The installation id: made once, with the database, and never changed. The default
-- REDIS_PREFIX is `spendgate-<id>`, so that two databases on one Redis never share queues, and
-- a prefix set by hand is claimed in Redis by this id (src/workers/prefix-claim.ts). 16 hex
-- digits (64 random bits) keep the default prefix short.
CREATE TABLE installation (
  id text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{16}$'),
  created_at timestamptz NOT NULL DEFAULT now()
);
-- One row, ever: a unique index on a constant refuses a second.
CREATE UNIQUE INDEX installation_one_row ON installation ((true));
INSERT INTO installation (id) VALUES (substr(md5(gen_random_uuid()::text), 1, 16));

-- Changing or removing the id would hand this database's Redis claim and queues to nobody.
CREATE FUNCTION installation_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the installation id is immutable' USING ERRCODE = 'raise_exception';
END
$$;
CREATE TRIGGER installation_no_change BEFORE UPDATE OR DELETE ON installation
  FOR EACH ROW EXECUTE FUNCTION installation_immutable();
CREATE TRIGGER installation_no_truncate BEFORE TRUNCATE ON installation
  FOR EACH STATEMENT EXECUTE FUNCTION installation_immutable();
