-- The worker registry: every worker process records the queue it serves and the handlers it
-- registered when it starts, and refreshes last_seen_at as it heartbeats. The API accepts a
-- handler target only when a worker has registered that handler on that queue (the built-in
-- handlers are known on the default queue without one), so schedules cannot name code no worker
-- has. Rows are kept after a worker stops: "ever registered" is what the check asks.
CREATE TABLE workers (
  id           text PRIMARY KEY,
  queue        text NOT NULL,
  handlers     text[] NOT NULL,
  version      text NOT NULL,
  started_at   timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL
);

CREATE INDEX workers_queue ON workers (queue);
