/**
 * `kairos signal <run id> <name> [json]`: sends a signal to a run's ctx.waitForSignal(name)
 * through the API (POST /v1/runs/:id/signals/:name), as the dashboard's button does. The body is
 * the JSON given (an object or array), or none: the run then receives null.
 */
import type { Output } from '../output.js';
import { ApiRequestError, apiRequest, refusalMessage } from './api-request.js';

export async function signalCommand(out: Output, args: readonly string[], env: Record<string, string | undefined>, json: boolean): Promise<number> {
  const [runId, name, text] = args;
  if (runId === undefined || name === undefined) throw new ApiRequestError('signal needs a run id and a signal name: kairos signal <run id> <name> [json]');
  let body: unknown;
  if (text !== undefined) {
    try {
      body = JSON.parse(text);
    } catch (error) {
      throw new ApiRequestError(`the signal's body must be JSON: ${(error as Error).message}`);
    }
  }
  const answer = await apiRequest<{ delivered?: boolean }>(env, 'POST', `/v1/runs/${encodeURIComponent(runId)}/signals/${encodeURIComponent(name)}`, body);
  if (!answer.ok) throw new ApiRequestError(refusalMessage(answer));
  if (json) out.line(JSON.stringify(answer.body, null, 2));
  else out.line(answer.body?.delivered ? `delivered signal ${name} to run ${runId}: it resumes now` : `sent signal ${name} to run ${runId}: kept until the run waits for it`);
  return 0;
}
