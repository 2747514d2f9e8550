-- The `auto` DST policy (Vixie cron's rule, resolved per cron expression) for dst.gap and
-- dst.overlap, and the default for schedules created from now on.
--
-- Schedules already stored keep the policy they were created with. Both columns have been
-- NOT NULL since 0001, filled with the then default ('shift', 'first') whenever a definition left
-- dst out, so every existing row already names its policy explicitly: nothing is rewritten, and
-- changing the column default below touches no existing row. (Setting an existing row to 'auto'
-- would change when it fires: an hourly cron would start firing twice in a repeated hour.)

ALTER TABLE schedules
  DROP CONSTRAINT schedules_dst_gap_check,
  DROP CONSTRAINT schedules_dst_overlap_check,
  ADD CONSTRAINT schedules_dst_gap_check CHECK (dst_gap IN ('auto', 'shift', 'skip')),
  ADD CONSTRAINT schedules_dst_overlap_check CHECK (dst_overlap IN ('auto', 'first', 'last', 'both')),
  ALTER COLUMN dst_gap SET DEFAULT 'auto',
  ALTER COLUMN dst_overlap SET DEFAULT 'auto';
