/**
 * Sensors: a handler evaluated every so often on the workers, with a cursor, that answers which
 * runs the world asks for, each under a run key unique for the sensor. Its answer is read here;
 * the ledger commits it (the runs it has not seen and the new cursor) in one transaction.
 */
import type { JsonValue } from './closed-sets.js';

/** What an evaluation run carries beside its handler target: the sensor, and the cursor it evaluates from. */
export interface SensorEvaluation {
  sensor: { id: string; name: string };
  cursor: JsonValue | null;
}

/** What an evaluation handler returns (the SDK's `SensorResult`). */
export interface SensorResult {
  runs: { runKey: string; payload: JsonValue | null }[];
  /** Absent: the cursor stays as it was. */
  cursor?: JsonValue | null;
}

export const MAX_RUN_KEY_LENGTH = 512;
export const MAX_SENSOR_RUNS_PER_EVALUATION = 1_000;

export type SensorResultReading = { kind: 'read'; result: SensorResult } | { kind: 'invalid'; reason: string };

/** An evaluation's result as the ledger commits it, or why it cannot be. */
export function readSensorResult(value: unknown): SensorResultReading {
  const invalid = (reason: string): SensorResultReading => ({ kind: 'invalid', reason: `the evaluation answered ${reason}; return { runs: [{ runKey, payload }], cursor }` });
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return invalid(value === null || value === undefined ? 'nothing' : `a ${Array.isArray(value) ? 'list' : typeof value}`);
  const answer = value as Record<string, unknown>;
  const unknown = Object.keys(answer).filter((key) => key !== 'runs' && key !== 'cursor');
  if (unknown.length > 0) return invalid(`an object with ${unknown.map((k) => JSON.stringify(k)).join(', ')}`);
  const runs = answer.runs ?? [];
  if (!Array.isArray(runs)) return invalid('runs that are not a list');
  if (runs.length > MAX_SENSOR_RUNS_PER_EVALUATION) return invalid(`${runs.length} runs, more than the ${MAX_SENSOR_RUNS_PER_EVALUATION} one evaluation may ask for`);
  const read: SensorResult['runs'] = [];
  for (const [i, run] of runs.entries()) {
    if (run === null || typeof run !== 'object' || Array.isArray(run)) return invalid(`runs[${i}] that is not an object`);
    const { runKey, payload, ...rest } = run as Record<string, unknown>;
    if (Object.keys(rest).length > 0) return invalid(`runs[${i}] with ${Object.keys(rest).map((k) => JSON.stringify(k)).join(', ')}`);
    if (typeof runKey !== 'string' || runKey.length === 0 || runKey.length > MAX_RUN_KEY_LENGTH) {
      return invalid(`runs[${i}].runKey that is not a string of 1 to ${MAX_RUN_KEY_LENGTH} characters`);
    }
    read.push({ runKey, payload: (payload ?? null) as JsonValue | null });
  }
  return { kind: 'read', result: answer.cursor === undefined ? { runs: read } : { runs: read, cursor: answer.cursor as JsonValue | null } };
}
