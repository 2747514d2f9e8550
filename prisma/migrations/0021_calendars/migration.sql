-- Calendars: named sets of local dates that schedules keep clear of. A calendar holds its own
-- dates and may take the public holidays of a country (and state and region), which Kairos
-- computes for each year a slot falls in. A schedule's `calendar` names the calendars it excludes
-- (by name, in its namespace), whether weekends are excluded too, and what becomes of a slot on
-- an excluded date: { "exclude": [...], "weekdaysOnly": bool, "onExcluded": "skip" | "previous" | "next" }.

CREATE TABLE calendars (
  namespace_id uuid NOT NULL REFERENCES namespaces (id),
  name         text NOT NULL,
  dates        date[] NOT NULL DEFAULT '{}',
  holidays     jsonb,
  description  text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (namespace_id, name),
  CHECK (holidays IS NULL OR jsonb_typeof(holidays -> 'country') = 'string'),
  CHECK (cardinality(dates) > 0 OR holidays IS NOT NULL)
);

ALTER TABLE schedules ADD COLUMN calendar jsonb;
ALTER TABLE schedules ADD CONSTRAINT schedules_calendar_shape
  CHECK (calendar IS NULL OR (jsonb_typeof(calendar -> 'exclude') = 'array' AND calendar ->> 'onExcluded' IN ('skip', 'previous', 'next')));

-- Which live schedules name a calendar: a delete is refused while any does, and a change re-plans them.
CREATE INDEX schedules_by_calendar ON schedules USING gin ((calendar -> 'exclude')) WHERE calendar IS NOT NULL AND deleted_at IS NULL;
