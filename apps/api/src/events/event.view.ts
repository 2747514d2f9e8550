/** The wire shape of an event, as REST and GraphQL return it. */
import { formatInstant } from '@kairos/domain';
import type { EventView } from '@kairos/domain/wire';
import type { EventRow } from '@kairos/ledger';
import type { z } from 'zod';

export type EventViewShape = z.output<typeof EventView>;

export function eventView(row: EventRow, deduped: boolean): EventViewShape {
  return {
    id: row.id,
    name: row.name,
    data: row.data,
    receivedAt: formatInstant(row.receivedAt),
    deduped,
    runs: row.runIds,
    skipped: row.skipped,
    resumed: row.resumed,
  };
}
