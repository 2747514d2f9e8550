/**
 * Signed webhook requests, as HTTP targets and subscriptions send them: the body signed with the
 * namespace's secret,
 *   Kairos-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">[,v1=<same, with the previous secret>]
 * (the second v1 while a rotated-away secret is in its grace window, so receivers move to the new
 * one at their own pace). Redirects are not followed. Addresses are checked after DNS resolution,
 * on the address actually dialled, so a name that resolves to a private address is refused too.
 */
import { createHmac } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { AddressPolicy, JsonValue } from '@kairos/domain';
import { NamespaceRepository, type Db } from '@kairos/ledger';

/** Response bodies kept, at most this many bytes. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
const KEPT_HEADERS = ['content-type', 'content-length', 'retry-after', 'location', 'date'];

export interface HttpResponseRecord {
  status: number;
  headers: Record<string, string>;
  body: JsonValue;
  truncated: boolean;
}

/** The address dialled is one the policy forbids. */
export class RefusedAddressError extends Error {}

/** The request got no answer within its timeout. */
export class WebhookTimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/** One v1 signature per secret, the current secret's first. */
export function signatureHeader(secrets: readonly string[], body: string, unixSeconds: number): string {
  const macs = secrets.map((secret) => `v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`);
  return [`t=${unixSeconds}`, ...macs].join(',');
}

/** Secrets are re-read this often, so a rotation reaches every process within seconds. */
const SECRET_CACHE_MS = 5_000;

/** The namespaces' signing secrets, each namespace's re-read every few seconds. */
export class SigningSecrets {
  private readonly cache = new Map<string, { secrets: string[]; until: number }>();

  constructor(
    private readonly db: Db,
    private readonly namespaces: NamespaceRepository = new NamespaceRepository(),
  ) {}

  /** The namespace's current secret, then the previous one while its grace lasts. */
  async of(namespaceId: string): Promise<string[]> {
    const cached = this.cache.get(namespaceId);
    if (cached && cached.until > Date.now()) return cached.secrets;
    const stored = (await this.namespaces.signingSecrets(this.db, namespaceId))!;
    const secrets = stored.previous === null ? [stored.secret] : [stored.secret, stored.previous];
    // Never cache past the grace: the previous secret stops signing when it ends.
    const until = Math.min(Date.now() + SECRET_CACHE_MS, stored.previousValidUntil?.getTime() ?? Infinity);
    this.cache.set(namespaceId, { secrets, until });
    return secrets;
  }
}

export interface WebhookRequest {
  method: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Sends one request to `url`, dialling only addresses `policy` allows, and answers the response
 * (its body cut at MAX_RESPONSE_BYTES). Rejects with RefusedAddressError, WebhookTimeoutError, the
 * signal's reason when it aborts, or the network's error.
 */
export function sendWebhook(url: URL, policy: AddressPolicy, request: WebhookRequest): Promise<HttpResponseRecord> {
  const client = url.protocol === 'https:' ? https : http;
  const sendsBody = request.method !== 'GET' && request.method !== 'DELETE';
  return new Promise((resolve, reject) => {
    const timeout = AbortSignal.timeout(request.timeoutMs);
    const outgoing = client.request(url, {
      method: request.method,
      headers: sendsBody ? { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) } : request.headers,
      signal: request.signal ? AbortSignal.any([request.signal, timeout]) : timeout,
      lookup: checkedLookup(policy, url.hostname),
    });
    outgoing.on('error', (error) => reject(timeout.aborted ? new WebhookTimeoutError(`no response within ${request.timeoutMs} ms`) : error));
    outgoing.on('response', (response) => {
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
    if (sendsBody) outgoing.end(request.body);
    else outgoing.end();
  });
}

/** A DNS lookup that refuses forbidden addresses, so the check applies to the address dialled. */
function checkedLookup(policy: AddressPolicy, hostname: string): LookupFunction {
  const allowedHost = policy.hostAllowed(hostname);
  return (name, options, callback) => {
    dnsLookup(name, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 4);
      const refusals = allowedHost ? [] : addresses.map((a) => policy.refusal(a.address)).filter((r) => r !== null);
      if (refusals.length > 0) return callback(new RefusedAddressError(`${name} resolves to ${refusals[0]}`), '', 4);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0]!;
      return callback(null, first.address, first.family);
    });
  };
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
