/**
 * The fingerprint of a create request carrying an idempotency key: a repeat with the same body (in
 * any key order) is the same request and gets the original back; one with another body is a conflict.
 */
import { createHash } from 'node:crypto';
import { ConflictError } from './errors.js';
import { canonicalJson } from './schedule-spec.js';

export function requestHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

/**
 * Throws IDEMPOTENCY_CONFLICT when the request that first used the key had another body. Rows
 * stored before request hashes were recorded (null) are taken as the same request.
 */
export function assertSameRequest(storedHash: string | null, hash: string, key: string): void {
  if (storedHash !== null && storedHash !== hash) {
    throw new ConflictError(
      'IDEMPOTENCY_CONFLICT',
      'idempotencyKey',
      `idempotencyKey "${key}" was first used with another request body; send that body again to get the original, or use a new key`,
    );
  }
}
