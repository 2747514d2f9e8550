-- A run's live progress (ctx.progress): the last JSON value its handler reported, and when. Plain
-- columns with no index and no trigger: a run that never reports progress keeps them null and costs
-- nothing more; a report is an update of columns no index covers (a HOT update where the page has
-- room), made at most every 250 ms per run by the worker.
ALTER TABLE runs ADD COLUMN progress json;
ALTER TABLE runs ADD COLUMN progress_at timestamptz;

-- Protocol version 5: report_progress. Stores the run's progress, fenced by the holder's epoch and
-- owner as save_step is: false, and nothing changed, when the lease was lost. At most 64 KiB of JSON.
CREATE FUNCTION kairos_worker.report_progress(_run_id uuid, _epoch bigint, _owner text, _progress json)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM kairos_worker.require_runs(ARRAY[_run_id]);
  IF octet_length(_progress::text) > 65536 THEN
    RAISE EXCEPTION 'the progress of run % is % bytes of JSON; at most 65536', _run_id, octet_length(_progress::text)
      USING ERRCODE = 'program_limit_exceeded';
  END IF;
  UPDATE runs SET progress = _progress, progress_at = now()
  WHERE id = _run_id AND lease_epoch = _epoch AND lease_owner = _owner AND state = 'running';
  RETURN FOUND;
END $$;
REVOKE ALL ON FUNCTION kairos_worker.report_progress(uuid, bigint, text, json) FROM PUBLIC;

CREATE OR REPLACE FUNCTION kairos_worker.protocol_versions(OUT oldest integer, OUT newest integer)
LANGUAGE sql IMMUTABLE AS $$ SELECT 1, 5 $$;

CREATE OR REPLACE FUNCTION kairos_worker.protocol_version() RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT 5 $$;

DO $$
DECLARE
  credential text;
BEGIN
  FOR credential IN SELECT role_name FROM kairos_worker.credentials LOOP
    BEGIN
      EXECUTE format('GRANT EXECUTE ON FUNCTION kairos_worker.report_progress(uuid, bigint, text, json) TO %I', credential);
    EXCEPTION WHEN undefined_object THEN
      NULL; -- the login was dropped by hand; `kairos workers revoke` removes its row
    END;
  END LOOP;
END $$;
