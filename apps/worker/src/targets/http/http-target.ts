/**
 * The HTTP target: POSTs (or the configured method) a JSON envelope with the run id, schedule id,
 * slot, attempt and the payload verbatim, signed with the namespace's secret (see signed-webhook):
 *   Idempotency-Key: <schedule id>:<slot ISO instant>   (stable across retries; <run id> for ad-hoc runs;
 *                    a step of a multi-step run adds :<step name>, and its body adds "step" and "inputs")
 *   Kairos-Signature: t=<unix seconds>,v1=...
 *   traceparent, tracestate: the W3C trace context of the run's execution span, when the run is traced
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { AddressPolicy, formatInstant, type AttemptOutcome, type JsonValue, type Target } from '@kairos/domain';
import type { DatabaseClock, Db } from '@kairos/ledger';
import type { ClaimedRun } from '@kairos/sdk';
import { DATABASE, DATABASE_CLOCK, KAIROS_CONFIG, RefusedAddressError, SigningSecrets, WebhookTimeoutError, sendWebhook, signatureHeader, type HttpResponseRecord } from '@kairos/process';
import { traceContextOf } from '@kairos/telemetry';

type HttpTargetSpec = Extract<Target, { type: 'http' }>;

@Injectable()
export class HttpTarget {
  private readonly policy: AddressPolicy;
  private readonly secrets: SigningSecrets;

  constructor(
    @Inject(KAIROS_CONFIG) config: KairosConfig,
    @Inject(DATABASE) db: Db,
    @Inject(DATABASE_CLOCK) private readonly clock: DatabaseClock,
  ) {
    this.policy = new AddressPolicy(config.worker.httpAllowList);
    this.secrets = new SigningSecrets(db);
  }

  async call(run: ClaimedRun, target: HttpTargetSpec, signal: AbortSignal): Promise<AttemptOutcome> {
    const url = new URL(target.url);
    // Literals are refused when the run is created; this catches runs stored before that check.
    const refusal = this.policy.urlRefusal(target.url);
    if (refusal) return { kind: 'failed', retryable: false, reasonCode: 'TARGET_REFUSED', message: refusal };
    const body = JSON.stringify({
      runId: run.id,
      scheduleId: run.scheduleId,
      scheduledFor: formatInstant(run.scheduledFor),
      attempt: run.attempt,
      payload: run.payload,
      ...(run.stepName !== null && { step: run.stepName, inputs: run.inputs ?? {} }),
    });
    const slotKey = run.scheduleId ? `${run.scheduleId}:${formatInstant(run.scheduledFor)}` : (run.graphRunId ?? run.id);
    const headers: Record<string, string> = {
      ...target.headers,
      'content-type': 'application/json',
      'user-agent': 'kairos',
      // One key per slot (per run when ad hoc), and per step of a multi-step run.
      'idempotency-key': run.stepName !== null ? `${slotKey}:${run.stepName}` : slotKey,
      'kairos-signature': signatureHeader(await this.secrets.of(run.namespaceId), body, Math.floor(this.clock.now() / 1000)),
      'kairos-run-id': run.id,
      'kairos-attempt': String(run.attempt),
      ...traceHeaders(),
    };
    try {
      const response = await sendWebhook(url, this.policy, { method: target.method, headers, body, timeoutMs: target.timeoutMs, signal });
      return this.outcomeOf(response);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (error instanceof RefusedAddressError) {
        return { kind: 'failed', retryable: false, reasonCode: 'TARGET_REFUSED', message: error.message };
      }
      if (error instanceof WebhookTimeoutError) {
        return { kind: 'failed', retryable: true, reasonCode: 'TIMEOUT', message: `no response within ${target.timeoutMs} ms` };
      }
      return { kind: 'failed', retryable: true, reasonCode: 'HTTP_NETWORK_ERROR', message: (error as Error).message };
    }
  }

  private outcomeOf(response: HttpResponseRecord): AttemptOutcome {
    const { status } = response;
    const kept = response as unknown as Record<string, unknown>;
    const details = { status };
    if (status >= 200 && status < 300) return { kind: 'succeeded', result: response as unknown as JsonValue, response: kept };
    if (status >= 300 && status < 400) {
      return { kind: 'failed', retryable: false, reasonCode: 'HTTP_REDIRECT', message: `answered ${status}; redirects are not followed`, details, response: kept };
    }
    if (status === 408 || status === 429) {
      return { kind: 'failed', retryable: true, reasonCode: 'HTTP_RETRYABLE_STATUS', message: `answered ${status}`, details, response: kept };
    }
    if (status >= 400 && status < 500) {
      return { kind: 'failed', retryable: false, reasonCode: 'HTTP_4XX', message: `answered ${status}`, details, response: kept };
    }
    return { kind: 'failed', retryable: true, reasonCode: 'HTTP_5XX', message: `answered ${status}`, details, response: kept };
  }
}

/** The execution span the delivery happens in (the active one), as W3C trace-context headers; none when nothing traces the run. */
function traceHeaders(): Record<string, string> {
  const { traceParent, traceState } = traceContextOf();
  if (traceParent === null) return {};
  return traceState === null ? { traceparent: traceParent } : { traceparent: traceParent, tracestate: traceState };
}
