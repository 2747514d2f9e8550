-- Subscriptions: webhooks that are told of the namespace's events, built from the outbox so a
-- delivery exists exactly when its event does; and deadlines on schedules (expect.succeededWithin),
-- which the leader checks against the ledger and reports as schedule.late and schedule.recovered.

ALTER TABLE outbox DROP CONSTRAINT outbox_topic_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_topic_check CHECK (topic IN (
  'schedule.created', 'schedule.updated', 'schedule.paused', 'schedule.resumed', 'schedule.deleted', 'schedule.completed',
  'schedule.missed', 'schedule.late', 'schedule.recovered', 'run.succeeded', 'run.failed', 'run.dead', 'sensor.failed',
  'outage.detected', 'subscription.disabled', 'ping'));

-- The leader fans each event out to the subscriptions that match it, once: in the transaction
-- that writes their deliveries it marks the event fanned out. Events written before
-- subscriptions existed have nobody to go to.
ALTER TABLE outbox ADD COLUMN fanned_out_at timestamptz;
UPDATE outbox SET fanned_out_at = now();
CREATE INDEX outbox_not_fanned_out ON outbox (id) WHERE fanned_out_at IS NULL;

CREATE TABLE subscriptions (
  id              uuid PRIMARY KEY,
  namespace_id    uuid NOT NULL REFERENCES namespaces (id),
  url             text NOT NULL,
  events          text[] NOT NULL CHECK (cardinality(events) > 0),
  schedule_ids    uuid[] NOT NULL DEFAULT '{}',
  labels          jsonb NOT NULL DEFAULT '{}',
  format          text NOT NULL CHECK (format IN ('json', 'slack')),
  description     text,
  state           text NOT NULL CHECK (state IN ('active', 'paused', 'disabled')),
  disabled_reason text,
  -- Since when its oldest undelivered event has been failing; null while deliveries succeed.
  failing_since   timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  CHECK ((state = 'disabled') = (disabled_reason IS NOT NULL))
);
CREATE INDEX subscriptions_by_namespace ON subscriptions (namespace_id, id DESC);
CREATE INDEX subscriptions_listening ON subscriptions (namespace_id) WHERE state = 'active';

CREATE TABLE subscription_deliveries (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
  -- The outbox event's id (outbox rows are pruned by retention, so no foreign key).
  event_id        bigint NOT NULL,
  event_type      text NOT NULL,
  -- The delivery body, frozen when the event was fanned out: { id, type, occurredAt, namespace, data }.
  body            jsonb NOT NULL,
  state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  created_at      timestamptz NOT NULL DEFAULT now(),
  finished_at     timestamptz,
  UNIQUE (subscription_id, event_id),
  CHECK ((state = 'pending') = (finished_at IS NULL))
);
CREATE INDEX subscription_deliveries_due ON subscription_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX subscription_deliveries_by_subscription ON subscription_deliveries (subscription_id, id DESC);
CREATE INDEX subscription_deliveries_finished ON subscription_deliveries (finished_at) WHERE state <> 'pending';

CREATE TABLE subscription_attempts (
  delivery_id  bigint NOT NULL REFERENCES subscription_deliveries (id) ON DELETE CASCADE,
  attempt      integer NOT NULL,
  attempted_at timestamptz NOT NULL,
  status_code  integer,
  latency_ms   integer NOT NULL,
  error        text,
  PRIMARY KEY (delivery_id, attempt)
);

-- Deadlines: a slot whose run has not succeeded this long after the slot is late.
ALTER TABLE schedules
  ADD COLUMN expect_succeeded_within_ms bigint CHECK (expect_succeeded_within_ms > 0),
  -- The newest slot whose deadline was judged; the next check starts after it.
  ADD COLUMN deadline_checked_through timestamptz,
  -- The first late slot of the lateness under way; null while the schedule keeps its deadlines.
  ADD COLUMN late_since timestamptz;
CREATE INDEX schedules_with_deadlines ON schedules (id) WHERE expect_succeeded_within_ms IS NOT NULL;

-- True when an active subscription of the namespace listens to `topic`: the events only
-- subscriptions read (a run's success or failed attempt, a missed slot, a failed evaluation, an
-- outage) are written only then, so the run path pays nothing while nobody listens.
CREATE FUNCTION kairos_subscribed(_namespace uuid, _topic text) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM subscriptions s WHERE s.namespace_id = _namespace AND s.state = 'active' AND _topic = ANY (s.events))
$$;

-- A run (not a step of one) that succeeded, or whose attempt failed (retried, or ended dead).
CREATE FUNCTION kairos_run_outcome_event() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  topic text := CASE WHEN NEW.state = 'succeeded' THEN 'run.succeeded' ELSE 'run.failed' END;
BEGIN
  IF NOT kairos_subscribed(NEW.namespace_id, topic) THEN
    RETURN NULL;
  END IF;
  INSERT INTO outbox (namespace_id, topic, aggregate_id, payload)
  VALUES (NEW.namespace_id, topic, NEW.id, jsonb_build_object(
    'runId', NEW.id, 'scheduleId', NEW.schedule_id, 'sensorId', NEW.sensor_id, 'attempt', OLD.attempt,
    'maxAttempts', NEW.max_attempts, 'scheduledFor', NEW.scheduled_for)
    || CASE WHEN NEW.state = 'succeeded' THEN '{}'::jsonb ELSE jsonb_build_object(
         'willRetry', NEW.state = 'queued',
         'reasonCode', coalesce(NEW.reason_code, (SELECT e.reason_code FROM run_events e
                                                   WHERE e.run_id = NEW.id AND e.kind = 'retry_scheduled' ORDER BY e.id DESC LIMIT 1)),
         'reasonText', coalesce(NEW.reason_text, NEW.error->>'message'),
         'nextAttemptAt', CASE WHEN NEW.state = 'queued' THEN NEW.available_at END) END);
  RETURN NULL;
END $$;

CREATE TRIGGER runs_outcome_event AFTER UPDATE OF state ON runs FOR EACH ROW
  WHEN (NEW.parent_run_id IS NULL AND OLD.state = 'running'
        AND (NEW.state IN ('succeeded', 'dead') OR (NEW.state = 'queued' AND NEW.attempt > OLD.attempt)))
  EXECUTE FUNCTION kairos_run_outcome_event();

-- A slot recorded as missed.
CREATE FUNCTION kairos_missed_slot_event() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF kairos_subscribed(NEW.namespace_id, 'schedule.missed') THEN
    INSERT INTO outbox (namespace_id, topic, aggregate_id, payload)
    VALUES (NEW.namespace_id, 'schedule.missed', NEW.schedule_id, jsonb_build_object(
      'scheduleId', NEW.schedule_id, 'scheduledFor', NEW.scheduled_for, 'reasonCode', NEW.reason_code, 'reasonText', NEW.reason_text));
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER ticks_missed_event AFTER INSERT ON ticks FOR EACH ROW
  WHEN (NEW.outcome = 'missed') EXECUTE FUNCTION kairos_missed_slot_event();

-- An evaluation of a sensor that failed.
CREATE FUNCTION kairos_sensor_failed_event() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  namespace uuid := (SELECT s.namespace_id FROM sensors s WHERE s.id = NEW.sensor_id);
BEGIN
  IF namespace IS NOT NULL AND kairos_subscribed(namespace, 'sensor.failed') THEN
    INSERT INTO outbox (namespace_id, topic, aggregate_id, payload)
    VALUES (namespace, 'sensor.failed', NEW.sensor_id, jsonb_build_object(
      'sensorId', NEW.sensor_id, 'runId', NEW.evaluation_run_id, 'reasonCode', NEW.reason_code, 'reasonText', NEW.reason_text));
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER sensor_ticks_failed_event AFTER INSERT ON sensor_ticks FOR EACH ROW
  WHEN (NEW.state = 'failed') EXECUTE FUNCTION kairos_sensor_failed_event();
CREATE TRIGGER sensor_ticks_failed_event_update AFTER UPDATE OF state ON sensor_ticks FOR EACH ROW
  WHEN (NEW.state = 'failed' AND OLD.state <> 'failed') EXECUTE FUNCTION kairos_sensor_failed_event();

-- An outage (no scheduler, or a partition without an owner, for a while): every namespace that listens hears of it.
CREATE FUNCTION kairos_outage_event() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO outbox (namespace_id, topic, aggregate_id, payload)
  SELECT DISTINCT s.namespace_id, 'outage.detected', s.namespace_id, jsonb_build_object(
    'outageId', NEW.id, 'startedAt', NEW.started_at, 'endedAt', NEW.ended_at, 'partition', NEW.partition, 'reasonCode', NEW.reason_code)
  FROM subscriptions s WHERE s.state = 'active' AND 'outage.detected' = ANY (s.events);
  RETURN NULL;
END $$;

CREATE TRIGGER outages_event AFTER INSERT ON outages FOR EACH ROW EXECUTE FUNCTION kairos_outage_event();
