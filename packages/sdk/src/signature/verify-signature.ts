/**
 * Checking a Kairos webhook delivery: the `Kairos-Signature` header is
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, keyed with the namespace's signing
 * secret. A header may carry several `v1=` values (while a rotated secret is still honoured, a
 * delivery is signed with both); any one matching is enough.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface VerifySignatureOptions {
  /** The namespace's signing secret. */
  secret: string;
  /** The `Kairos-Signature` header as received. */
  header: string | null | undefined;
  /** The raw request body, exactly as received (not re-serialised JSON). */
  body: string | Buffer;
  /** How old a delivery may be, in seconds; older ones are refused as possible replays. Default 300. */
  toleranceSeconds?: number;
  /** The current time in ms (for tests). Default: now. */
  nowMs?: number;
}

export type SignatureRefusal = 'MISSING_HEADER' | 'MALFORMED_HEADER' | 'TIMESTAMP_OUT_OF_TOLERANCE' | 'NO_MATCHING_SIGNATURE';

export type SignatureCheck = { valid: true; timestamp: number } | { valid: false; reason: SignatureRefusal };

const HEX_SHA256 = /^[0-9a-f]{64}$/i;

/** Whether the delivery was signed with `secret` within the tolerance; compares in constant time. */
export function verifySignature(options: VerifySignatureOptions): SignatureCheck {
  const { secret, header, body, toleranceSeconds = 300, nowMs = Date.now() } = options;
  if (!header) return { valid: false, reason: 'MISSING_HEADER' };
  let timestamp: number | null = null;
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const key = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (key === 't' && /^\d{1,15}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && HEX_SHA256.test(value)) signatures.push(Buffer.from(value, 'hex'));
  }
  if (timestamp === null || signatures.length === 0) return { valid: false, reason: 'MALFORMED_HEADER' };
  if (Math.abs(nowMs / 1000 - timestamp) > toleranceSeconds) return { valid: false, reason: 'TIMESTAMP_OUT_OF_TOLERANCE' };
  const expected = createHmac('sha256', secret)
    .update(`${timestamp}.`)
    .update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
    .digest();
  // Every candidate is compared, so the time taken does not tell which one (if any) matched.
  let matched = false;
  for (const signature of signatures) matched = timingSafeEqual(signature, expected) || matched;
  return matched ? { valid: true, timestamp } : { valid: false, reason: 'NO_MATCHING_SIGNATURE' };
}
