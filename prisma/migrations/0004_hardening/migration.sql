-- Hardening: browser sessions opened by POST /auth/login, rotatable signing secrets, and the hash
-- of the request that created an idempotent schedule or run (a reused key with another body is a
-- conflict, not a silent dedupe).

-- A browser session: the cookie carries a random token stored only as its sha256, and every
-- state-changing request must echo the session's CSRF token in a header. Revoking the key ends it.
CREATE TABLE login_sessions (
  id          uuid PRIMARY KEY,
  token_hash  text NOT NULL UNIQUE,
  csrf_hash   text NOT NULL,
  api_key_id  uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL
);
CREATE INDEX login_sessions_expires_at ON login_sessions (expires_at);

-- After a rotation deliveries are signed with the new and the previous secret until this instant.
ALTER TABLE namespaces
  ADD COLUMN previous_signing_secret text,
  ADD COLUMN previous_secret_valid_until timestamptz,
  ADD CONSTRAINT namespaces_previous_secret CHECK ((previous_signing_secret IS NULL) = (previous_secret_valid_until IS NULL));

-- sha256 of the canonical JSON of the create request; NULL for rows created before this migration.
ALTER TABLE schedules ADD COLUMN request_hash text;
ALTER TABLE runs ADD COLUMN request_hash text;
