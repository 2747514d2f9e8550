-- Priority and fair share.
--
-- A run has a priority, 1 (starts first) to 5 (default 3), which its job carries into the
-- transport: BullMQ hands a queue's jobs out best priority first, oldest first within one, to
-- every worker of the queue.
--
-- A run may have a fairness key (resolved from its payload when it is created) and a weight. Among
-- a queue's due runs within one priority, the keys take starts in proportion to their weights; runs
-- without a key share one key (''). The transport cannot order by turns, so the ledger does: a
-- queue's keyed runs (`fair`) enter the transport through a window, at most kairos_fair_window() of
-- them handed over and not yet claimed. While the window has room and nothing waits, a new run
-- enters at once and pays for nothing more. Beyond it, runs wait in the queue's backlog, held
-- (deferReason FAIR_SHARE, no job), and while a backlog exists the queue's runs without a key wait
-- with them. The window is filled from the backlog by weighted turns (stride scheduling): each key
-- of a priority has a pass, the key with the lowest pass gives the next run, oldest first, and its
-- pass grows by 1 / weight; a key that starts waiting joins at the lowest pass of its priority, so
-- a key with one run waits behind at most one turn of each other key, never behind their backlogs.
-- When runs leave the window (claimed, cancelled, held by a limit) the relay, woken, fills it again
-- and hands the runs let in over.
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

-- The queues of a namespace with a backlog: their runs without a key wait their turn too.
CREATE TABLE fair_queues (
  namespace_id uuid NOT NULL,
  queue        text NOT NULL,
  PRIMARY KEY (namespace_id, queue)
);

-- Per key with runs in a backlog: the pass of its next turn. A key found with none left is removed.
CREATE TABLE fair_keys (
  namespace_id uuid NOT NULL,
  queue        text NOT NULL,
  priority     smallint NOT NULL,
  key          text NOT NULL,
  pass         float8 NOT NULL,
  -- The weight of its runs (of the last to join, should they differ).
  weight       smallint NOT NULL DEFAULT 1,
  PRIMARY KEY (namespace_id, queue, priority, key)
);
CREATE INDEX fair_keys_turns ON fair_keys (namespace_id, queue, priority, pass, key);

-- How many of a queue's fair runs the transport holds at once, unclaimed.
CREATE FUNCTION kairos_fair_window() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 128 $$;

CREATE FUNCTION kairos_fair_lock(_namespace uuid, _queue text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT hashtextextended('fair/' || _namespace || '/' || _queue, 0) $$;

-- How many of the queue's fair runs the transport holds unclaimed, counting up to _upto.
CREATE FUNCTION kairos_fair_inside(_namespace uuid, _queue text, _upto integer) RETURNS integer
LANGUAGE sql STABLE AS $$
  SELECT count(*)::integer FROM (
    SELECT 1 FROM runs w
    WHERE w.namespace_id = _namespace AND coalesce(w.target->>'queue', 'default') = _queue AND w.fair AND w.state = 'queued'
      AND w.held_at IS NULL AND w.available_at <= now() + interval '1 second'
    LIMIT _upto) inside
$$;

-- Fills the window of queue _queue of namespace _namespace from its backlog, by weighted turns,
-- set-wise: the keys of the best priority with the lowest passes are given the turns their passes
-- and weights make theirs (the i-th next run of a key comes at pass + i / weight), and each key's
-- oldest waiting runs take them. Answers the runs let in, to hand over; with _enqueue they are
-- marked enqueued (the caller hands them over after its commit), without they are left to the
-- relay. A key found with no run left is removed, and a queue left with nothing waiting stops
-- holding its runs without a key.
CREATE FUNCTION kairos_fair_fill(_namespace uuid, _queue text, _enqueue boolean)
RETURNS TABLE (id uuid, "availableAt" timestamptz, queue text, "jobId" text, priority smallint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
  free integer;
  taken integer;
  rounds integer := 0;
  turn_priorities smallint[];
  turn_keys text[];
  turn_counts integer[];
  let_ids uuid[];
  let_at timestamptz[];
  let_priorities smallint[];
  let_jobs text[];
  short_priorities smallint[];
  short_keys text[];
BEGIN
  PERFORM pg_advisory_xact_lock(kairos_fair_lock(_namespace, _queue));
  LOOP
    IF NOT EXISTS (SELECT 1 FROM fair_keys k WHERE k.namespace_id = _namespace AND k.queue = _queue) THEN
      DELETE FROM fair_queues q WHERE q.namespace_id = _namespace AND q.queue = _queue;
      RETURN;
    END IF;
    free := kairos_fair_window() - kairos_fair_inside(_namespace, _queue, kairos_fair_window());
    -- A turn at a time costs a fill each: the window is topped up once a quarter of it is free.
    EXIT WHEN free < kairos_fair_window() / 4 OR rounds = 3;
    rounds := rounds + 1;
    SELECT array_agg(g.priority), array_agg(g.key), array_agg(g.n) INTO turn_priorities, turn_keys, turn_counts FROM (
    SELECT t.priority, t.key, count(*)::integer AS n FROM (
      SELECT top.priority, top.key, top.pass + i::float8 / top.weight AS v
      FROM (SELECT k.priority, k.key, k.pass, k.weight FROM fair_keys k WHERE k.namespace_id = _namespace AND k.queue = _queue
            ORDER BY k.priority, k.pass, k.key LIMIT free) top,
           generate_series(0, free - 1) AS i
      ORDER BY 1, 3, 2 LIMIT free) t
    GROUP BY t.priority, t.key) g;
    WITH chosen AS (
      SELECT r.id FROM unnest(turn_priorities, turn_keys, turn_counts) AS t(priority, key, n)
      CROSS JOIN LATERAL (
        SELECT r.id FROM runs r
        WHERE r.namespace_id = _namespace AND coalesce(r.target->>'queue', 'default') = _queue AND r.priority = t.priority
          AND coalesce(r.fairness_key, '') = t.key AND r.held_at IS NOT NULL AND r.defer_reason = 'FAIR_SHARE'
        ORDER BY r.available_at, r.id LIMIT t.n
        FOR UPDATE SKIP LOCKED) r
    ), released AS (
      UPDATE runs r SET held_at = NULL, defer_reason = NULL, updated_at = now(), enqueued_at = CASE WHEN _enqueue THEN now() END
      FROM chosen WHERE r.id = chosen.id
      RETURNING r.id, r.available_at, r.priority, coalesce(r.fairness_key, '') AS key, r.hold_count
    ), counted AS (
      SELECT x.priority, x.key, count(*)::integer AS n FROM released x GROUP BY x.priority, x.key
    ), passed AS (
      UPDATE fair_keys k SET pass = k.pass + c.n::float8 / k.weight
      FROM counted c
      WHERE k.namespace_id = _namespace AND k.queue = _queue AND k.priority = c.priority AND k.key = c.key
    )
    SELECT array_agg(x.id), array_agg(x.available_at), array_agg(x.priority), array_agg(CASE WHEN x.hold_count > 0 THEN x.id || '-h' || x.hold_count END),
           (SELECT array_agg(t.priority) FROM unnest(turn_priorities, turn_keys, turn_counts) AS t(priority, key, n)
            LEFT JOIN counted c ON c.priority = t.priority AND c.key = t.key WHERE coalesce(c.n, 0) < t.n),
           (SELECT array_agg(t.key) FROM unnest(turn_priorities, turn_keys, turn_counts) AS t(priority, key, n)
            LEFT JOIN counted c ON c.priority = t.priority AND c.key = t.key WHERE coalesce(c.n, 0) < t.n)
    INTO let_ids, let_at, let_priorities, let_jobs, short_priorities, short_keys
    FROM released x;
    taken := coalesce(cardinality(let_ids), 0);
    RETURN QUERY SELECT l.id, l.at, _queue, l.job, l.priority FROM unnest(let_ids, let_at, let_jobs, let_priorities) AS l(id, at, job, priority);
    -- The keys given more turns than they had runs have none left (unless a run was locked: then they stay).
    IF short_keys IS NOT NULL THEN
      SELECT array_agg(t.priority), array_agg(t.key) INTO short_priorities, short_keys
      FROM unnest(short_priorities, short_keys) AS t(priority, key)
      WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.namespace_id = _namespace AND coalesce(r.target->>'queue', 'default') = _queue
                          AND r.priority = t.priority AND coalesce(r.fairness_key, '') = t.key AND r.held_at IS NOT NULL AND r.defer_reason = 'FAIR_SHARE'
                        OFFSET 0);
      DELETE FROM fair_keys k USING unnest(short_priorities, short_keys) AS t(priority, key)
      WHERE k.namespace_id = _namespace AND k.queue = _queue AND k.priority = t.priority AND k.key = t.key;
    END IF;
    IF taken > 0 AND NOT _enqueue THEN
      PERFORM pg_notify('kairos_released', '');
    END IF;
    EXIT WHEN taken >= free;
  END LOOP;
END $$;

-- Fills the window of every queue with a backlog: the relay's pass, woken when runs leave a window.
CREATE FUNCTION kairos_fair_fill_all()
RETURNS TABLE (id uuid, "availableAt" timestamptz, queue text, "jobId" text, priority smallint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
DECLARE
  q record;
BEGIN
  FOR q IN SELECT f.namespace_id, f.queue FROM fair_queues f ORDER BY 1, 2 LOOP
    RETURN QUERY SELECT * FROM kairos_fair_fill(q.namespace_id, q.queue, true);
  END LOOP;
END $$;

-- Runs just written that go through their queue's window (fair, due within a second; a run due
-- later is handed over as any run is). A run written while its queue had runs waiting waits from
-- the start (the insert held it). Otherwise, while nothing waits and the window has room, the new
-- runs enter at once; the ones beyond the window, or all of them once runs wait, join the backlog,
-- and the window is filled. Answers the runs that joined (joined), and the runs let in from the
-- backlog, marked enqueued, for the caller to hand over after its commit.
CREATE FUNCTION kairos_fair_enter(_run_ids uuid[])
RETURNS TABLE (id uuid, "availableAt" timestamptz, queue text, "jobId" text, priority smallint, joined boolean)
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
#variable_conflict use_column
DECLARE
  q record;
  waiting boolean;
  over integer := 0;
  ids uuid[];
  priorities smallint[];
  keys text[];
  weights smallint[];
BEGIN
  FOR q IN
    SELECT r.namespace_id AS ns, coalesce(r.target->>'queue', 'default') AS queue, bool_or(r.held_at IS NOT NULL) AS held_already FROM runs r
    WHERE r.id = ANY(_run_ids) AND r.fair AND r.state = 'queued' AND (r.held_at IS NULL OR r.defer_reason = 'FAIR_SHARE')
      AND r.available_at <= now() + interval '1 second' AND r.target->>'type' <> 'steps'
    GROUP BY 1, 2 ORDER BY 1, 2
  LOOP
    PERFORM pg_advisory_xact_lock(kairos_fair_lock(q.ns, q.queue));
    waiting := q.held_already OR EXISTS (SELECT 1 FROM fair_keys k WHERE k.namespace_id = q.ns AND k.queue = q.queue);
    IF NOT waiting THEN
      -- The new runs are in the window already: only those beyond it wait.
      over := kairos_fair_inside(q.ns, q.queue, kairos_fair_window() + cardinality(_run_ids)) - kairos_fair_window();
      CONTINUE WHEN over <= 0;
    END IF;
    -- Those that wait: all once runs wait, else the last in the order of turns (the lowest priority, the newest).
    WITH chosen AS (
      SELECT n.id FROM runs n
      WHERE n.id = ANY(_run_ids) AND n.namespace_id = q.ns AND coalesce(n.target->>'queue', 'default') = q.queue AND n.fair
        AND n.state = 'queued' AND n.held_at IS NULL AND n.available_at <= now() + interval '1 second' AND n.target->>'type' <> 'steps'
      ORDER BY n.priority DESC, n.available_at DESC, n.id DESC
      LIMIT CASE WHEN waiting THEN NULL ELSE over END
    ), held AS (
      UPDATE runs r SET held_at = now(), defer_reason = 'FAIR_SHARE', enqueued_at = NULL, hold_count = r.hold_count + 1
      FROM chosen WHERE r.id = chosen.id
      RETURNING r.id
    ), waits AS (
      SELECT h.id FROM held h
      UNION ALL
      SELECT r.id FROM runs r WHERE r.id = ANY(_run_ids) AND r.namespace_id = q.ns AND coalesce(r.target->>'queue', 'default') = q.queue
        AND r.held_at IS NOT NULL AND r.defer_reason = 'FAIR_SHARE'
    )
    SELECT array_agg(r.id), array_agg(r.priority), array_agg(coalesce(r.fairness_key, '')), array_agg(coalesce(r.fairness_weight, 1))
    INTO ids, priorities, keys, weights
    FROM waits w JOIN runs r ON r.id = w.id;
    CONTINUE WHEN ids IS NULL;
    INSERT INTO fair_queues (namespace_id, queue) VALUES (q.ns, q.queue) ON CONFLICT DO NOTHING;
    -- A key that starts waiting joins at the lowest pass of its priority; one already waiting keeps its place.
    INSERT INTO fair_keys AS k (namespace_id, queue, priority, key, pass, weight)
    SELECT q.ns, q.queue, e.priority, e.key,
           coalesce((SELECT min(o.pass) FROM fair_keys o WHERE o.namespace_id = q.ns AND o.queue = q.queue AND o.priority = e.priority), 0),
           max(e.weight)
    FROM unnest(priorities, keys, weights) AS e(priority, key, weight) GROUP BY e.priority, e.key
    ON CONFLICT (namespace_id, queue, priority, key) DO UPDATE SET pass = greatest(k.pass, EXCLUDED.pass), weight = EXCLUDED.weight;
    RETURN QUERY SELECT j, NULL::timestamptz, NULL::text, NULL::text, NULL::smallint, true FROM unnest(ids) AS j;
    RETURN QUERY SELECT f.*, false FROM kairos_fair_fill(q.ns, q.queue, true) f;
  END LOOP;
END $$;

-- A run of the window that leaves it (claimed, cancelled, held by a limit) makes room for the next
-- turn: the relay, woken (one notification per transaction), fills the window and hands the runs
-- over. The claim itself takes no turn: it neither waits for nor holds the queue's lock.
CREATE FUNCTION kairos_fair_left() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('kairos_released', '');
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
REVOKE ALL ON FUNCTION kairos_fair_fill_all() FROM PUBLIC;

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
