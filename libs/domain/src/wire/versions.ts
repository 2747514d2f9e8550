/**
 * The wire shapes of code versions in flight: moving a pinned run to another version (POST
 * /v1/runs/{id}/version), and per queue and version the live workers, the active runs and the runs
 * waiting for their version (GET /v1/versions), which tells an operator when an old version's
 * last worker may be stopped.
 */
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { QUEUE_NAME_PATTERN } from '../handlers.js';
import { closedObject, readWire, screenedBy, text } from './read.js';
import { component } from './registry.js';

/** The longest version a run may be moved to. */
export const MAX_VERSION_LENGTH = 200;

export const RunVersionMove = component(
  'RunVersionMove',
  closedObject({
    version: screenedBy((value, field) => {
      if (value === undefined) {
        throw new ValidationError('MISSING_FIELD', field, `${field} is required: the version the run moves to, e.g. "2026.12.03-1", or null to let a worker of any version take it`);
      }
    }, text(MAX_VERSION_LENGTH).nullable()).describe(
      `The version whose workers may claim the run from now on (1 to ${MAX_VERSION_LENGTH} characters, as a worker's KairosWorker version), or null: a worker of any version.`,
    ),
  }),
  "Moves a run to another version of the code. Its later attempts and resumes are claimed only by that version's workers (or by workers started with upgrade \"auto\"); a run waiting for its version (VERSION_UNAVAILABLE) is released at once when a live worker serves the new one. The move is recorded in the run's events (version_moved).",
);

/** A POST /v1/runs/{id}/version body: the version the run moves to, null for any. */
export function readRunVersionMove(body: unknown): { version: string | null } {
  return { version: readWire(RunVersionMove, body).version ?? null };
}

const count = () => z.int().min(0);

export const VersionView = component(
  'VersionView',
  z.strictObject({
    queue: z.string().regex(QUEUE_NAME_PATTERN),
    version: z.string().describe("The workers' version (KairosWorker's `version`, \"unversioned\" when they set none)."),
    workers: count().describe('Live workers of the queue running this version: seen in the last minute and not stopped.'),
    activeRuns: count().describe("Runs of the caller's namespace on the queue claimed by this version that have not ended (queued, running, sleeping, waiting)."),
    pinnedWaiting: count().describe('Of those, the runs held until a worker of their version runs (deferReason VERSION_UNAVAILABLE).'),
  }),
  'A version of the code on a queue: its live workers and the runs that need it. When activeRuns is 0 its last worker may be stopped.',
);
export const VersionList = component(
  'VersionList',
  z.strictObject({ items: z.array(VersionView).describe('By queue, then version.') }),
  'Every queue and version with a live worker or an active run of the namespace (not paginated).',
);
