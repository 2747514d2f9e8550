/**
 * The HTTP target: POSTs (or the configured method) a JSON envelope with the run id, schedule id,
 * slot, attempt and the payload verbatim, signed with the namespace's secret:
 *   Idempotency-Key: <schedule id>:<slot ISO instant>   (stable across retries; <run id> for ad-hoc runs;
 *                    a step of a multi-step run adds :<step name>, and its body adds "step" and "inputs")
 *   Kairos-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">[,v1=<same, with the previous secret>]
 *   traceparent, tracestate: the W3C trace context of the run's execution span, when the run is traced
 * The second v1 is present while a rotated-away secret is in its grace window, so receivers can
 * move to the new secret at their own pace.
 * Redirects are not followed. Addresses are checked after DNS resolution, on the address actually
 * dialled, so a name that resolves to a private address is refused too.
 */
import { createHmac } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Inject, Injectable } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { AddressPolicy, formatInstant, type AttemptOutcome, type JsonValue, type Target } from '@kairos/domain';
import { NamespaceRepository, type DatabaseClock, type Db } from '@kairos/ledger';
import type { ClaimedRun } from '@kairos/sdk';
import { DATABASE, DATABASE_CLOCK, KAIROS_CONFIG } from '@kairos/process';
import { traceContextOf } from '@kairos/telemetry';

type HttpTargetSpec = Extract<Target, { type: 'http' }>;

/** Response bodies kept on the run, at most this many bytes. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
const KEPT_HEADERS = ['content-type', 'content-length', 'retry-after', 'location', 'date'];

export interface HttpResponseRecord {
  status: number;
  headers: Record<string, string>;
  body: JsonValue;
  truncated: boolean;
}

class RefusedAddressError extends Error {}

/** Secrets are re-read this often, so a rotation reaches every worker within seconds. */
const SECRET_CACHE_MS = 5_000;

/** One v1 signature per secret, the current secret's first. */
export function signatureHeader(secrets: readonly string[], body: string, unixSeconds: number): string {
  const macs = secrets.map((secret) => `v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`);
  return [`t=${unixSeconds}`, ...macs].join(',');
}

@Injectable()
export class HttpTarget {
  private readonly policy: AddressPolicy;
  private readonly secrets = new Map<string, { secrets: string[]; until: number }>();

  constructor(
    @Inject(KAIROS_CONFIG) config: KairosConfig,
    @Inject(DATABASE) private readonly db: Db,
    @Inject(DATABASE_CLOCK) private readonly clock: DatabaseClock,
    private readonly namespaces: NamespaceRepository,
  ) {
    this.policy = new AddressPolicy(config.worker.httpAllowList);
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
      'kairos-signature': signatureHeader(await this.secretsOf(run.namespaceId), body, Math.floor(this.clock.now() / 1000)),
      'kairos-run-id': run.id,
      'kairos-attempt': String(run.attempt),
      ...traceHeaders(),
    };
    try {
      const response = await this.send(url, target, headers, body, signal);
      return this.outcomeOf(response);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (error instanceof RefusedAddressError) {
        return { kind: 'failed', retryable: false, reasonCode: 'TARGET_REFUSED', message: error.message };
      }
      if ((error as Error).name === 'TimeoutError') {
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

  private send(url: URL, target: HttpTargetSpec, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<HttpResponseRecord> {
    const client = url.protocol === 'https:' ? https : http;
    const sendsBody = target.method !== 'GET' && target.method !== 'DELETE';
    return new Promise((resolve, reject) => {
      const timeout = AbortSignal.timeout(target.timeoutMs);
      const request = client.request(url, {
        method: target.method,
        headers: sendsBody ? { ...headers, 'content-length': String(Buffer.byteLength(body)) } : headers,
        signal: AbortSignal.any([signal, timeout]),
        lookup: this.checkedLookup(url.hostname),
      });
      request.on('error', (error) => reject(timeout.aborted ? Object.assign(new Error('timeout'), { name: 'TimeoutError' }) : error));
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        response.on('data', (chunk: Buffer) => {
          if (size < MAX_RESPONSE_BYTES) chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - size));
          truncated ||= size + chunk.length > MAX_RESPONSE_BYTES;
          size += chunk.length;
        });
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const kept: Record<string, string> = {};
          for (const name of KEPT_HEADERS) {
            const value = response.headers[name];
            if (typeof value === 'string') kept[name] = value;
          }
          resolve({ status: response.statusCode ?? 0, headers: kept, body: parseBody(text, kept['content-type'], truncated), truncated });
        });
      });
      if (sendsBody) request.end(body);
      else request.end();
    });
  }

  /** A DNS lookup that refuses forbidden addresses, so the check applies to the address dialled. */
  private checkedLookup(hostname: string): LookupFunction {
    const allowedHost = this.policy.hostAllowed(hostname);
    return (name, options, callback) => {
      dnsLookup(name, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
        if (error) return callback(error, '', 4);
        const refusals = allowedHost ? [] : addresses.map((a) => this.policy.refusal(a.address)).filter((r) => r !== null);
        if (refusals.length > 0) return callback(new RefusedAddressError(`${name} resolves to ${refusals[0]}`), '', 4);
        if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        const first = addresses[0]!;
        return callback(null, first.address, first.family);
      });
    };
  }

  /** The namespace's current secret, then the previous one while its grace lasts. */
  private async secretsOf(namespaceId: string): Promise<string[]> {
    const cached = this.secrets.get(namespaceId);
    if (cached && cached.until > Date.now()) return cached.secrets;
    const stored = (await this.namespaces.signingSecrets(this.db, namespaceId))!;
    const secrets = stored.previous === null ? [stored.secret] : [stored.secret, stored.previous];
    // Never cache past the grace: the previous secret stops signing when it ends.
    const until = Math.min(Date.now() + SECRET_CACHE_MS, stored.previousValidUntil?.getTime() ?? Infinity);
    this.secrets.set(namespaceId, { secrets, until });
    return secrets;
  }
}

/** The execution span the delivery happens in (the active one), as W3C trace-context headers; none when nothing traces the run. */
function traceHeaders(): Record<string, string> {
  const { traceParent, traceState } = traceContextOf();
  if (traceParent === null) return {};
  return traceState === null ? { traceparent: traceParent } : { traceparent: traceParent, tracestate: traceState };
}

function parseBody(text: string, contentType: string | undefined, truncated: boolean): JsonValue {
  if (!truncated && contentType?.includes('json')) {
    try {
      return JSON.parse(text) as JsonValue;
    } catch {
      return text;
    }
  }
  return text;
}
