-- Schedules as code. A schedule may belong to an apply source (the team or service whose files
-- declare it): `kairos apply --prune` deletes only its own source's leftovers. Every change to a
-- schedule's definition, by apply or through the API, records a version: its spec hash, the
-- definition in wire form, who made it (an API key, a source, the CLI) and the fields it changed.
ALTER TABLE schedules ADD COLUMN source text;
CREATE INDEX schedules_source ON schedules (namespace_id, source) WHERE deleted_at IS NULL AND source IS NOT NULL;

CREATE TABLE schedule_versions (
  schedule_id uuid NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
  version     integer NOT NULL CHECK (version >= 1),
  spec_hash   text NOT NULL,
  -- The definition as GET /v1/schedules/:id shows it, kept as written (json: nothing queries into
  -- it, and bulk creation writes one per schedule); null for the version recorded by this
  -- migration for a schedule made before it, whose earlier definitions were not kept.
  definition  json,
  source      text,
  actor       text NOT NULL,
  applied_at  timestamptz NOT NULL DEFAULT now(),
  changes     jsonb NOT NULL DEFAULT '[]',
  PRIMARY KEY (schedule_id, version)
);

INSERT INTO schedule_versions (schedule_id, version, spec_hash, actor, applied_at)
SELECT id, 1, spec_hash, 'migration', updated_at FROM schedules WHERE deleted_at IS NULL;
