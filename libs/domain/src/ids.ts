import { randomUUID } from 'node:crypto';

/**
 * A UUIDv7: 48 bits of Unix milliseconds, then randomness. Ids sort by creation time, so keyset
 * pagination over `id DESC` walks history newest first and the primary key index stays append-mostly.
 * The random part comes from a v4 UUID (Node draws those from a cached pool of entropy): its first
 * 48 bits give way to the time and its version nibble to 7; its variant bits are already v7's.
 */
export function newId(nowMs: number = Date.now()): string {
  const random = randomUUID();
  const time = nowMs.toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
