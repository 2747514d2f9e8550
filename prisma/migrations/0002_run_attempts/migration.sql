-- One row per execution attempt of a run: which worker held it at which lease epoch, how often it
-- renewed the lease, and how the attempt ended (with the HTTP response, for http targets).
CREATE TABLE run_attempts (
  run_id          uuid NOT NULL REFERENCES runs (id),
  lease_epoch     bigint NOT NULL,
  attempt         integer NOT NULL,
  worker          text NOT NULL,
  started_at      timestamptz NOT NULL DEFAULT now(),
  renewals        integer NOT NULL DEFAULT 0,
  last_renewed_at timestamptz,
  finished_at     timestamptz,
  outcome         text CHECK (outcome IN ('succeeded', 'failed', 'cancelled', 'lost', 'drained')),
  reason_code     text,
  error           jsonb,
  response        jsonb,
  PRIMARY KEY (run_id, lease_epoch),
  CHECK ((outcome IS NULL) = (finished_at IS NULL))
);
