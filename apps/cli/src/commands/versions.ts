/**
 * `kairos versions` and `kairos runs move-version <run id> <version>|--any`: the versions of the
 * code in flight and moving a pinned run, through the API (GET /v1/versions, POST
 * /v1/runs/:id/version) at KAIROS_URL with KAIROS_API_KEY. A version whose active runs are down to
 * none may have its last worker stopped.
 */
import { table, type Output } from '../output.js';
import { ApiRequestError, apiRequest, refusalMessage } from './api-request.js';

interface Version {
  queue: string;
  version: string;
  workers: number;
  activeRuns: number;
  pinnedWaiting: number;
}

interface MovedRun {
  id: string;
  state: string;
  version: string | null;
  deferReason: string | null;
}

const MOVE_USAGE = 'kairos runs move-version <run id> <version>, or kairos runs move-version <run id> --any';

export async function versionsCommand(out: Output, args: readonly string[], env: Record<string, string | undefined>, json: boolean): Promise<number> {
  if (args.length > 0) throw new ApiRequestError(`unexpected "${args[0]}": kairos versions [--json]`);
  const answer = await apiRequest<{ items: Version[] }>(env, 'GET', '/v1/versions', undefined);
  if (!answer.ok) throw new ApiRequestError(refusalMessage(answer));
  const versions = answer.body!.items;
  if (json) out.line(JSON.stringify(versions, null, 2));
  else if (versions.length === 0) out.line('no versions: no live worker, and no active run claimed by one');
  else {
    out.line(
      table(
        ['QUEUE', 'VERSION', 'WORKERS', 'ACTIVE RUNS', 'WAITING'],
        versions.map((v) => [v.queue, v.version, String(v.workers), String(v.activeRuns), String(v.pinnedWaiting)]),
      ),
    );
  }
  return 0;
}

/** `args` are what follows `move-version`: the run id and the version, which `--any` replaces. */
export async function moveVersionCommand(out: Output, args: readonly string[], env: Record<string, string | undefined>, opts: { any: boolean; json: boolean }): Promise<number> {
  const [runId, version, ...extra] = args;
  if (runId === undefined || extra.length > 0) throw new ApiRequestError(`runs move-version needs a run id and a version: ${MOVE_USAGE}`);
  if (opts.any === (version !== undefined)) {
    throw new ApiRequestError(`runs move-version needs either a version or --any (a worker of any version takes it), not ${opts.any ? 'both' : 'neither'}: ${MOVE_USAGE}`);
  }
  const answer = await apiRequest<MovedRun>(env, 'POST', `/v1/runs/${encodeURIComponent(runId)}/version`, { version: version ?? null });
  if (!answer.ok) throw new ApiRequestError(refusalMessage(answer));
  const run = answer.body!;
  if (opts.json) out.line(JSON.stringify(run, null, 2));
  else {
    const to = run.version === null ? 'any version: a worker of any version may take it next' : `version ${run.version}`;
    const waiting = run.deferReason === 'VERSION_UNAVAILABLE' ? '; it waits until a worker of that version runs' : '';
    out.line(`moved run ${run.id} (${run.state}) to ${to}${waiting}`);
  }
  return 0;
}
