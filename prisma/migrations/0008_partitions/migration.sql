-- Scheduler partitions: several schedulers share the tick. Every schedule falls into one of 16
-- partitions by a hash of its id, and each partition is owned through its own fenced lease.

-- The partition is stored, so the tick's due-scan of one partition is an ordered index scan.
-- `& 15` keeps the low four bits of the (signed) hash: always 0..15, never an overflow.
ALTER TABLE schedules
  ADD COLUMN tick_partition smallint GENERATED ALWAYS AS ((hashtext(id::text) & 15)::smallint) STORED;
CREATE INDEX schedules_partition_due ON schedules (tick_partition, next_fire_at) WHERE status = 'active';

-- One lease row per partition, created unowned (epoch 0, expired), so taking a partition is
-- always a conditional UPDATE on the epoch its taker observed. `covered_since` is when the
-- current run of uninterrupted ownership began: the catch-up boundary of the partition's slots.
-- It carries over a clean hand-over (the previous owner released the lease moments ago) and
-- restarts after a gap.
CREATE TABLE partition_leases (
  partition     smallint PRIMARY KEY CHECK (partition BETWEEN 0 AND 15),
  holder        text NOT NULL,
  epoch         bigint NOT NULL CHECK (epoch >= 0),
  expires_at    timestamptz NOT NULL,
  acquired_at   timestamptz NOT NULL,
  renewed_at    timestamptz NOT NULL,
  released_at   timestamptz,
  covered_since timestamptz NOT NULL
);
INSERT INTO partition_leases (partition, holder, epoch, expires_at, acquired_at, renewed_at, covered_since)
SELECT p, '', 0, now(), now(), now(), now() FROM generate_series(0, 15) AS p;

-- The running schedulers, so each can work out its fair share. A member counts while its
-- heartbeat is fresh and its presence lock is held.
CREATE TABLE scheduler_members (
  holder       text PRIMARY KEY,
  hostname     text NOT NULL,
  pid          integer NOT NULL,
  started_at   timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now()
);

-- An outage may now be one partition's: the time between its owner's last sign of life and the
-- next owner taking it. Such an outage is detected by a scheduler that need not lead, so it names
-- the holder instead of a leader session.
ALTER TABLE outages ADD COLUMN partition smallint CHECK (partition BETWEEN 0 AND 15);
ALTER TABLE outages ADD COLUMN detected_by_holder text;
ALTER TABLE outages ALTER COLUMN detected_by_session DROP NOT NULL;
ALTER TABLE outages ADD CONSTRAINT outages_detected_by CHECK (
  (partition IS NULL AND detected_by_session IS NOT NULL) OR (partition IS NOT NULL AND detected_by_holder IS NOT NULL));
