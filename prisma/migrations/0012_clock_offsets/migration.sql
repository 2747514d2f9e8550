-- How far each process's host clock is from the database's, as its last heartbeat measured it
-- (database minus host, in ms; null before the first measure). BullMQ promotes a delayed job on
-- the consuming worker's clock, so a producer computes a job's delay in the clock of the
-- consumers of its queue; operators see every offset on the cluster page and in `kairos status`.
ALTER TABLE workers ADD COLUMN clock_offset_ms double precision;
ALTER TABLE scheduler_members ADD COLUMN clock_offset_ms double precision;
