-- Priority and fair share.
--
-- A run has a priority, 1 (starts first) to 5 (default 3), which its job carries into the
-- transport: BullMQ hands a queue's jobs out best priority first, oldest first within one, to
-- every worker of the queue.
--
-- A run may have a fairness key (resolved from its payload when it is created) and a weight. Among
-- a queue's due runs within one priority, the keys take starts in proportion to their weights; runs
-- without a key share one key (''). The transport cannot order by turns, so the ledger does: while
-- a queue of a namespace has keyed runs, its due runs (keyed or not: `fair`) enter the transport a
-- window at a time. A run that enters is held (deferReason FAIR_SHARE, no job) in the queue's
-- backlog, and the window is filled from the backlog by weighted turns (stride scheduling): each
-- key of a priority has a pass, the key with the lowest pass gives the next run, oldest first, and
-- its pass grows by 1 / weight; a key that starts waiting joins at the priority's current pass, so
-- a key with one run waits behind at most one turn of each other key, never behind their backlogs.
-- The window is refilled when one of its runs leaves it (a claim, a cancellation, a hold by a limit):
-- a trigger on the run. A queue whose runs have no key pays nothing of this.
ALTER TABLE runs
  ADD COLUMN priority        smallint NOT NULL DEFAULT 3,
  ADD COLUMN fairness_key    text,
  ADD COLUMN fairness_weight smallint,
  -- Whether the run entered its queue's transport through the fair-share window.
  ADD COLUMN fair            boolean NOT NULL DEFAULT false,
  ADD CONSTRAINT runs_priority CHECK (priority BETWEEN 1 AND 5),
  ADD CONSTRAINT runs_fairness CHECK ((fairness_key IS NULL) = (fairness_weight IS NULL) AND coalesce(fairness_weight, 1) BETWEEN 1 AND 100);

ALTER TABLE runs DROP CONSTRAINT runs_held_reason;
ALTER TABLE runs ADD CONSTRAINT runs_held_reason
  CHECK (held_at IS NULL OR defer_reason IN ('CONCURRENCY_LIMIT', 'QUEUE_LIMIT', 'QUEUE_RATE_LIMIT', 'VERSION_UNAVAILABLE', 'FAIR_SHARE'));

ALTER TABLE schedules
  ADD COLUMN priority smallint NOT NULL DEFAULT 3 CHECK (priority BETWEEN 1 AND 5),
  ADD COLUMN fairness jsonb;

-- A queue's backlog, in the order the window takes it: by priority, key, then oldest due first.
CREATE INDEX runs_fair_backlog ON runs (namespace_id, (coalesce(target->>'queue', 'default')), priority, (coalesce(fairness_key, '')), available_at, id)
  WHERE held_at IS NOT NULL AND defer_reason = 'FAIR_SHARE';
-- A queue's window: its fair runs handed to the transport and not yet claimed.
CREATE INDEX runs_fair_window ON runs (namespace_id, (coalesce(target->>'queue', 'default')), available_at)
  WHERE fair AND state = 'queued' AND held_at IS NULL;

-- Per queue of a namespace and priority while it has keyed runs: the pass of the last turn taken.
CREATE TABLE fair_queues (
  namespace_id uuid NOT NULL,
  queue        text NOT NULL,
  priority     smallint NOT NULL,
  pass         float8 NOT NULL DEFAULT 0,
  PRIMARY KEY (namespace_id, queue, priority)
);

-- Per key with runs in the backlog: the pass of its next turn. A key whose backlog empties is removed.
CREATE TABLE fair_keys (
  namespace_id uuid NOT NULL,
  queue        text NOT NULL,
  priority     smallint NOT NULL,
  key          text NOT NULL,
  pass         float8 NOT NULL,
  PRIMARY KEY (namespace_id, queue, priority, key)
);
CREATE INDEX fair_keys_turns ON fair_keys (namespace_id, queue, priority, pass, key);

-- How many of a queue's fair runs the transport holds at once, unclaimed.
CREATE FUNCTION kairos_fair_window() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 128 $$;

CREATE FUNCTION kairos_fair_lock(_namespace uuid, _queue text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT hashtextextended('fair/' || _namespace || '/' || _queue, 0) $$;

-- Fills the window of queue _queue of namespace _namespace from its backlog, by weighted turns:
-- answers the runs let in, to hand over. With _enqueue they are marked enqueued (the caller hands
-- them over after its commit); without, they are left to the relay, which the NOTIFY wakes. A
-- queue whose backlog and window are empty stops being fair.
CREATE FUNCTION kairos_fair_fill(_namespace uuid, _queue text, _enqueue boolean)
RETURNS TABLE (id uuid, "availableAt" timestamptz, queue text, "jobId" text, priority smallint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
  free integer;
  turn record;
  next record;
  taken integer := 0;
BEGIN
  PERFORM pg_advisory_xact_lock(kairos_fair_lock(_namespace, _queue));
  SELECT kairos_fair_window() - count(*) INTO free FROM (
    SELECT 1 FROM runs w
    WHERE w.namespace_id = _namespace AND coalesce(w.target->>'queue', 'default') = _queue AND w.fair AND w.state = 'queued'
      AND w.held_at IS NULL AND w.available_at <= now() + interval '1 second'
    LIMIT kairos_fair_window()) inside;
  WHILE free > 0 LOOP
    SELECT k.priority, k.key, k.pass INTO turn FROM fair_keys k
    WHERE k.namespace_id = _namespace AND k.queue = _queue
    ORDER BY k.priority, k.pass, k.key LIMIT 1;
    EXIT WHEN NOT FOUND;
    SELECT r.id, r.fairness_weight AS weight INTO next FROM runs r
    WHERE r.namespace_id = _namespace AND coalesce(r.target->>'queue', 'default') = _queue AND r.priority = turn.priority
      AND coalesce(r.fairness_key, '') = turn.key AND r.held_at IS NOT NULL AND r.defer_reason = 'FAIR_SHARE'
    ORDER BY r.available_at, r.id LIMIT 1
    FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
      DELETE FROM fair_keys k WHERE k.namespace_id = _namespace AND k.queue = _queue AND k.priority = turn.priority AND k.key = turn.key;
      CONTINUE;
    END IF;
    UPDATE fair_keys k SET pass = turn.pass + 1.0 / coalesce(next.weight, 1)
    WHERE k.namespace_id = _namespace AND k.queue = _queue AND k.priority = turn.priority AND k.key = turn.key;
    UPDATE fair_queues q SET pass = turn.pass WHERE q.namespace_id = _namespace AND q.queue = _queue AND q.priority = turn.priority;
    RETURN QUERY
      UPDATE runs r SET held_at = NULL, defer_reason = NULL, updated_at = now(), enqueued_at = CASE WHEN _enqueue THEN now() END
      WHERE r.id = next.id
      RETURNING r.id, r.available_at, _queue, CASE WHEN r.hold_count > 0 THEN r.id || '-h' || r.hold_count END, r.priority;
    taken := taken + 1;
    free := free - 1;
  END LOOP;
  IF taken > 0 AND NOT _enqueue THEN
    PERFORM pg_notify('kairos_released', '');
  END IF;
  IF free > 0 AND NOT EXISTS (SELECT 1 FROM fair_keys k WHERE k.namespace_id = _namespace AND k.queue = _queue)
     AND free >= kairos_fair_window() THEN
    DELETE FROM fair_queues q WHERE q.namespace_id = _namespace AND q.queue = _queue;
  END IF;
END $$;

-- Runs just written that go through their queue's window (fair): those due now (within a second)
-- join the backlog (the runs not due yet are handed over as any run is), and each queue's window is
-- filled. Answers the runs that joined (joined), and the runs let in, marked enqueued, for the
-- caller to hand over after its commit: new ones and any older ones of the backlog whose turn came.
CREATE FUNCTION kairos_fair_enter(_run_ids uuid[])
RETURNS TABLE (id uuid, "availableAt" timestamptz, queue text, "jobId" text, priority smallint, joined boolean)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
  ids uuid[];
  namespaces uuid[];
  queues text[];
  priorities smallint[];
  keys text[];
  q record;
BEGIN
  WITH held AS (
    UPDATE runs r SET held_at = now(), defer_reason = 'FAIR_SHARE', enqueued_at = NULL, hold_count = r.hold_count + 1
    WHERE r.id = ANY(_run_ids) AND r.fair AND r.state = 'queued' AND r.held_at IS NULL
      AND r.available_at <= now() + interval '1 second' AND r.target->>'type' <> 'steps'
    RETURNING r.id, r.namespace_id, coalesce(r.target->>'queue', 'default') AS queue, r.priority, coalesce(r.fairness_key, '') AS key
  )
  SELECT array_agg(h.id), array_agg(h.namespace_id), array_agg(h.queue), array_agg(h.priority), array_agg(h.key)
  INTO ids, namespaces, queues, priorities, keys
  FROM held h;
  IF ids IS NULL THEN
    RETURN;
  END IF;
  FOR q IN SELECT DISTINCT e.ns, e.queue FROM unnest(namespaces, queues) AS e(ns, queue) ORDER BY 1, 2 LOOP
    PERFORM pg_advisory_xact_lock(kairos_fair_lock(q.ns, q.queue));
    INSERT INTO fair_queues (namespace_id, queue, priority)
    SELECT DISTINCT e.ns, e.queue, e.priority FROM unnest(namespaces, queues, priorities) AS e(ns, queue, priority)
    WHERE e.ns = q.ns AND e.queue = q.queue
    ON CONFLICT DO NOTHING;
    -- A key that starts waiting joins at its priority's current turn; one already waiting keeps its place.
    INSERT INTO fair_keys (namespace_id, queue, priority, key, pass)
    SELECT DISTINCT e.ns, e.queue, e.priority, e.key, f.pass FROM unnest(namespaces, queues, priorities, keys) AS e(ns, queue, priority, key)
    JOIN fair_queues f ON f.namespace_id = e.ns AND f.queue = e.queue AND f.priority = e.priority
    WHERE e.ns = q.ns AND e.queue = q.queue
    ON CONFLICT DO NOTHING;
    RETURN QUERY SELECT f.*, false FROM kairos_fair_fill(q.ns, q.queue, true) f;
  END LOOP;
  RETURN QUERY SELECT j, NULL::timestamptz, NULL::text, NULL::text, NULL::smallint, true FROM unnest(ids) AS j;
END $$;

-- A run of the window that leaves it (claimed, cancelled, held by a limit) makes room for the next turn.
CREATE FUNCTION kairos_fair_left() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM kairos_fair_fill(NEW.namespace_id, coalesce(NEW.target->>'queue', 'default'), false);
  RETURN NULL;
END $$;

CREATE TRIGGER runs_fair_left AFTER UPDATE OF state, held_at ON runs FOR EACH ROW
  WHEN (OLD.fair AND OLD.state = 'queued' AND OLD.held_at IS NULL AND (NEW.state <> 'queued' OR NEW.held_at IS NOT NULL)
        AND NEW.defer_reason IS DISTINCT FROM 'FAIR_SHARE')
  EXECUTE FUNCTION kairos_fair_left();

-- The ready steps of graphs, with their priority for the transport.
DROP FUNCTION kairos_worker.take_ready_steps(uuid[]);
CREATE FUNCTION kairos_worker.take_ready_steps(_graph_run_ids uuid[])
RETURNS TABLE (id uuid, "availableAt" timestamptz, queue text, priority smallint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
  scope kairos_worker.credentials := kairos_worker.caller_scope();
BEGIN
  RETURN QUERY
    UPDATE runs r SET enqueued_at = now()
    WHERE r.parent_run_id = ANY(_graph_run_ids) AND r.state = 'queued' AND r.enqueued_at IS NULL AND r.available_at < 'infinity'
      AND (scope IS NULL OR (r.namespace_id = scope.namespace_id AND coalesce(r.target->>'queue', 'default') = ANY(scope.queues)))
    RETURNING r.id, r.available_at, coalesce(r.target->>'queue', 'default'), r.priority;
END $$;
REVOKE ALL ON FUNCTION kairos_worker.take_ready_steps(uuid[]) FROM PUBLIC;

-- The runs a worker's verdicts released (places freed), with their priority for the transport.
DROP FUNCTION kairos_worker.finish_runs_v3(text, json);
CREATE FUNCTION kairos_worker.finish_runs_v3(_owner text, _verdicts json)
RETURNS TABLE (id uuid, released boolean, "availableAt" timestamptz, queue text, "jobId" text, priority smallint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT SET enable_seqscan = off AS $$
#variable_conflict use_column
DECLARE
  scope kairos_worker.credentials := kairos_worker.caller_scope();
BEGIN
  PERFORM set_config('kairos.released', '', true);
  RETURN QUERY SELECT f.id, false, NULL::timestamptz, NULL::text, NULL::text, NULL::smallint FROM kairos_worker.finish_runs(_owner, _verdicts) f;
  IF current_setting('kairos.released', true) = '' THEN
    RETURN;
  END IF;
  -- Only runs the caller may hand over (its namespace and queues); the relay takes the rest.
  RETURN QUERY
    UPDATE runs r SET enqueued_at = now()
    WHERE r.id = ANY(string_to_array(current_setting('kairos.released', true), ',')::uuid[])
      AND r.enqueued_at IS NULL AND r.held_at IS NULL AND r.state IN ('queued', 'sleeping', 'waiting')
      AND (scope IS NULL OR (r.namespace_id = scope.namespace_id AND coalesce(r.target->>'queue', 'default') = ANY(scope.queues)))
    RETURNING r.id, true, r.available_at, coalesce(r.target->>'queue', 'default'), CASE WHEN r.hold_count > 0 THEN r.id || '-h' || r.hold_count END,
              r.priority;
END $$;
REVOKE ALL ON FUNCTION kairos_worker.finish_runs_v3(text, json) FROM PUBLIC;

REVOKE ALL ON FUNCTION kairos_fair_fill(uuid, text, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION kairos_fair_enter(uuid[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION kairos_fair_left() FROM PUBLIC;

DO $$
DECLARE
  credential text;
BEGIN
  FOR credential IN SELECT role_name FROM kairos_worker.credentials LOOP
    BEGIN
      EXECUTE format('GRANT EXECUTE ON FUNCTION kairos_worker.take_ready_steps(uuid[]), kairos_worker.finish_runs_v3(text, json) TO %I', credential);
    EXCEPTION WHEN undefined_object THEN
      NULL; -- the login was dropped by hand; `kairos workers revoke` removes its row
    END;
  END LOOP;
END $$;
