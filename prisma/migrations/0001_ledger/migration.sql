-- Kairos ledger: the source of truth. Every instant is timestamptz (UTC on the wire), every
-- status is text with a CHECK mirroring its enum in libs/domain, structured values are jsonb,
-- and user payloads/results are json (text-preserving: key order and spelling come back as sent).

CREATE TABLE namespaces (
  id             uuid PRIMARY KEY,
  name           text NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  -- HMAC key for the Kairos-Signature header of HTTP targets.
  signing_secret text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);

INSERT INTO namespaces (id, name, signing_secret)
VALUES (gen_random_uuid(), 'default',
        replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));

CREATE TABLE api_keys (
  id           uuid PRIMARY KEY,
  namespace_id uuid NOT NULL REFERENCES namespaces (id),
  name         text NOT NULL,
  -- The public part of the key, shown in listings; the secret is stored only as a sha256 hash.
  prefix       text NOT NULL UNIQUE,
  secret_hash  text NOT NULL,
  scopes       text[] NOT NULL CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['read', 'write', 'admin']),
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at   timestamptz
);

CREATE TABLE schedules (
  id                uuid PRIMARY KEY,
  namespace_id      uuid NOT NULL REFERENCES namespaces (id),
  name              text NOT NULL,
  kind              text NOT NULL CHECK (kind IN ('cron', 'every', 'at')),
  cron              text,
  every_ms          bigint CHECK (every_ms > 0),
  at                timestamptz,
  timezone          text NOT NULL DEFAULT 'UTC',
  dst_gap           text NOT NULL DEFAULT 'shift' CHECK (dst_gap IN ('shift', 'skip')),
  dst_overlap       text NOT NULL DEFAULT 'first' CHECK (dst_overlap IN ('first', 'last', 'both')),
  catchup_mode      text NOT NULL DEFAULT 'latest' CHECK (catchup_mode IN ('none', 'latest', 'all')),
  catchup_window_ms bigint CHECK (catchup_window_ms > 0),
  catchup_limit     integer CHECK (catchup_limit > 0),
  overlap           text NOT NULL DEFAULT 'skip'
                    CHECK (overlap IN ('allow', 'skip', 'buffer_one', 'buffer_all', 'replace')),
  target            jsonb NOT NULL,
  payload           json,
  retry             jsonb NOT NULL,
  timeout_ms        bigint NOT NULL CHECK (timeout_ms > 0),
  start_at          timestamptz,
  end_at            timestamptz,
  max_runs          integer CHECK (max_runs > 0),
  jitter_ms         bigint NOT NULL DEFAULT 0 CHECK (jitter_ms >= 0),
  labels            jsonb NOT NULL DEFAULT '{}',
  idempotency_key   text,
  spec_hash         text NOT NULL,
  status            text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'completed', 'deleted')),
  -- The cursor: the earliest slot not yet evaluated, and what has fired so far.
  next_fire_at      timestamptz,
  last_fire_at      timestamptz,
  fire_count        integer NOT NULL DEFAULT 0,
  paused_at         timestamptz,
  resumed_at        timestamptz,
  completed_at      timestamptz,
  deleted_at        timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'cron') = (cron IS NOT NULL)),
  CHECK ((kind = 'every') = (every_ms IS NOT NULL)),
  CHECK ((kind = 'at') = (at IS NOT NULL)),
  CHECK ((status = 'deleted') = (deleted_at IS NOT NULL)),
  CHECK (status <> 'active' OR next_fire_at IS NOT NULL)
);

CREATE UNIQUE INDEX schedules_name_key ON schedules (namespace_id, name) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX schedules_idempotency_key ON schedules (namespace_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
-- The tick's claim path: due, active schedules in slot order.
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE status = 'active';
CREATE INDEX schedules_listing ON schedules (namespace_id, id DESC) WHERE deleted_at IS NULL;

CREATE TABLE runs (
  id                  uuid PRIMARY KEY,
  namespace_id        uuid NOT NULL REFERENCES namespaces (id),
  schedule_id         uuid REFERENCES schedules (id),
  origin              text NOT NULL CHECK (origin IN ('schedule', 'manual', 'retry', 'backfill', 'republish')),
  -- The run this one re-executes (retry and republish).
  source_run_id       uuid REFERENCES runs (id),
  scheduled_for       timestamptz NOT NULL,
  available_at        timestamptz NOT NULL,
  defer_reason        text,
  state               text NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled', 'dead')),
  -- At most one running run per schedule unless the run was created under overlap 'allow'.
  exclusive           boolean NOT NULL DEFAULT true,
  attempt             integer NOT NULL DEFAULT 1 CHECK (attempt >= 1),
  max_attempts        integer NOT NULL CHECK (max_attempts >= 1),
  target              jsonb NOT NULL,
  payload             json,
  retry               jsonb NOT NULL,
  timeout_ms          bigint NOT NULL CHECK (timeout_ms > 0),
  lease_owner         text,
  lease_epoch         bigint NOT NULL DEFAULT 0,
  lease_expires_at    timestamptz,
  heartbeat_at        timestamptz,
  crash_count         integer NOT NULL DEFAULT 0,
  cancel_requested_at timestamptz,
  cancel_requested_by text,
  enqueued_at         timestamptz,
  result              json,
  error               jsonb,
  reason_code         text,
  reason_text         text,
  idempotency_key     text,
  created_at          timestamptz NOT NULL DEFAULT now(),
  started_at          timestamptz,
  finished_at         timestamptz,
  updated_at          timestamptz NOT NULL DEFAULT now(),
  CHECK ((state IN ('succeeded', 'failed', 'cancelled', 'dead')) = (reason_code IS NOT NULL)),
  CHECK ((state IN ('succeeded', 'failed', 'cancelled', 'dead')) = (finished_at IS NOT NULL)),
  CHECK ((state = 'running') = (lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL))
);

CREATE UNIQUE INDEX runs_idempotency_key ON runs (namespace_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- The relay's work list: committed runs not yet handed to Redis.
CREATE INDEX runs_unenqueued ON runs (available_at) WHERE state = 'queued' AND enqueued_at IS NULL;
-- The reconciler's work list: queued runs Redis should already hold.
CREATE INDEX runs_queued_enqueued ON runs (available_at) WHERE state = 'queued' AND enqueued_at IS NOT NULL;
-- The reaper's work list.
CREATE INDEX runs_running_lease ON runs (lease_expires_at) WHERE state = 'running';
-- Overlap decisions read the active runs of one schedule.
CREATE INDEX runs_active_by_schedule ON runs (schedule_id, scheduled_for)
  WHERE schedule_id IS NOT NULL AND state IN ('queued', 'running');
-- Overlap and concurrency hold in the database: one exclusive running run per schedule.
CREATE UNIQUE INDEX runs_one_exclusive_running ON runs (schedule_id) WHERE state = 'running' AND exclusive;
CREATE INDEX runs_by_schedule ON runs (schedule_id, id DESC) WHERE schedule_id IS NOT NULL;
CREATE INDEX runs_listing ON runs (namespace_id, id DESC);
CREATE INDEX runs_dead ON runs (namespace_id, id DESC) WHERE state = 'dead';

CREATE TABLE ticks (
  schedule_id   uuid NOT NULL REFERENCES schedules (id),
  scheduled_for timestamptz NOT NULL,
  namespace_id  uuid NOT NULL REFERENCES namespaces (id),
  outcome       text NOT NULL CHECK (outcome IN ('triggered', 'skipped', 'missed', 'error')),
  reason_code   text NOT NULL,
  reason_text   text,
  -- Deferred: a tick is written before its run, so a slot another scheduler already ticked
  -- (ON CONFLICT DO NOTHING) never gets a run created for it.
  run_id        uuid REFERENCES runs (id) DEFERRABLE INITIALLY DEFERRED,
  origin        text NOT NULL CHECK (origin IN ('schedule', 'backfill')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  -- At most one tick per (schedule, slot), whatever the number of schedulers running.
  CONSTRAINT ticks_schedule_slot_key UNIQUE (schedule_id, scheduled_for),
  CHECK ((outcome = 'triggered') = (run_id IS NOT NULL))
);

CREATE TABLE run_events (
  id          bigint GENERATED ALWAYS AS IDENTITY,
  run_id      uuid NOT NULL REFERENCES runs (id),
  at          timestamptz NOT NULL DEFAULT clock_timestamp(),
  kind        text NOT NULL,
  from_state  text,
  to_state    text,
  lease_epoch bigint,
  actor       text NOT NULL,
  reason_code text,
  detail      jsonb NOT NULL DEFAULT '{}',
  -- Keyed by run first: every read is "the events of one run, in order".
  PRIMARY KEY (run_id, id)
);

-- Named singleton roles (the scheduler leader). Expiry is always computed on the database clock.
CREATE TABLE leases (
  name        text PRIMARY KEY,
  holder      text NOT NULL,
  epoch       bigint NOT NULL CHECK (epoch >= 1),
  expires_at  timestamptz NOT NULL,
  acquired_at timestamptz NOT NULL,
  renewed_at  timestamptz NOT NULL
);

CREATE TABLE scheduler_sessions (
  id           uuid PRIMARY KEY,
  holder       text NOT NULL,
  hostname     text NOT NULL,
  pid          integer NOT NULL,
  started_at   timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now(),
  stopped_at   timestamptz,
  stop_reason  text CHECK (stop_reason IN ('clean', 'crashed'))
);

CREATE INDEX scheduler_sessions_open ON scheduler_sessions (started_at) WHERE stopped_at IS NULL;

CREATE TABLE outages (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  started_at          timestamptz NOT NULL,
  ended_at            timestamptz NOT NULL,
  previous_session_id uuid REFERENCES scheduler_sessions (id),
  detected_by_session uuid NOT NULL REFERENCES scheduler_sessions (id),
  reason_code         text NOT NULL,
  CHECK (ended_at >= started_at)
);

-- Domain events, written in the transaction of the change they describe; the leader publishes
-- them to a Redis stream in id order and marks them published.
CREATE TABLE outbox (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  namespace_id uuid NOT NULL REFERENCES namespaces (id),
  topic        text NOT NULL CHECK (topic IN ('schedule.created', 'schedule.updated', 'schedule.paused', 'schedule.resumed',
                                              'schedule.deleted', 'schedule.completed', 'run.dead')),
  aggregate_id uuid NOT NULL,
  payload      jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz
);

CREATE INDEX outbox_unpublished ON outbox (id) WHERE published_at IS NULL;
