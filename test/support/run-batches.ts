/**
 * Runs made in bulk through POST /v1/runs/batch and waited for in the ledger, for the tests that
 * put thousands of runs through workers and read their start and finish instants.
 */
import type pg from 'pg';
import { expect } from 'vitest';
import { waitFor, type api } from './kairos.js';

/** Creates the runs of `bodies`, a thousand per request; each must be accepted. Answers their ids, in order. */
export async function createRuns(client: ReturnType<typeof api>, bodies: unknown[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < bodies.length; i += 1_000) {
    const answer = await client.post('/v1/runs/batch', { items: bodies.slice(i, i + 1_000) });
    expect(answer.status).toBe(200);
    for (const item of answer.body.items) {
      expect(item.id, JSON.stringify(item.error)).toBeTypeOf('string');
      ids.push(item.id);
    }
  }
  return ids;
}

/** Waits until every run of `ids` succeeded, failing at once if one ends otherwise. */
export async function allSucceeded(db: pg.Pool, ids: readonly string[], timeoutMs: number, intervalMs = 50): Promise<void> {
  await waitFor(
    async () => {
      const { rows } = await db.query<{ active: number; failed: number }>(
        `SELECT count(*) FILTER (WHERE state IN ('queued', 'running'))::int AS active,
                count(*) FILTER (WHERE state NOT IN ('queued', 'running', 'succeeded'))::int AS failed
         FROM runs WHERE id = ANY($1::uuid[])`,
        [ids],
      );
      expect(rows[0]!.failed).toBe(0);
      return rows[0]!.active === 0 ? true : undefined;
    },
    `${ids.length} runs to finish`,
    timeoutMs,
    intervalMs,
  );
}

/** The p-th percentile of `values` (nearest rank). */
export const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
