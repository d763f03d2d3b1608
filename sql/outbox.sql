-- The transactional outbox of nestjs-redis-ack-queue (docs/outbox.md), table redis_ack_queue_outbox.
-- Idempotent: running it again changes nothing.
CREATE TABLE IF NOT EXISTS "redis_ack_queue_outbox" (
  -- Insert order: the relay pushes a transaction's rows in it.
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The writing transaction: one relay claims all of its rows, so their order holds.
  tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
  -- Marks the push in Redis, atomically with it: a row pushed before its delete is never pushed twice.
  receipt uuid NOT NULL DEFAULT gen_random_uuid(),
  -- 'push' (payload: the message's JSON) or 'flow' (payload: the whole flow's JSON).
  kind text NOT NULL DEFAULT 'push',
  topic text NOT NULL,
  -- The message's id ('' for a push with a key mode: the relay's push decides it).
  message_id text NOT NULL,
  payload text NOT NULL,
  -- The push options as JSON (NULL: none).
  options text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- Set when the row can never be pushed; such a row waits for requeue or purge.
  dead_at timestamptz,
  dead_reason text
);
CREATE INDEX IF NOT EXISTS "redis_ack_queue_outbox_tx" ON "redis_ack_queue_outbox" (tx, id);
CREATE TABLE IF NOT EXISTS "redis_ack_queue_outbox_relays" (
  relay_id text PRIMARY KEY,
  host text NOT NULL,
  pid integer NOT NULL,
  started_at timestamptz NOT NULL,
  seen_at timestamptz NOT NULL,
  redis_ok boolean NOT NULL,
  last_error text,
  relayed bigint NOT NULL DEFAULT 0,
  lag_ms bigint NOT NULL DEFAULT 0
);
CREATE OR REPLACE FUNCTION "redis_ack_queue_outbox_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Sent at commit only (a rolled-back insert notifies nobody), once per transaction and channel.
  PERFORM pg_notify('redis_ack_queue_outbox', '');
  RETURN NULL;
END
$$;
CREATE OR REPLACE TRIGGER "redis_ack_queue_outbox_notify" AFTER INSERT ON "redis_ack_queue_outbox"
  FOR EACH STATEMENT EXECUTE FUNCTION "redis_ack_queue_outbox_notify"();
