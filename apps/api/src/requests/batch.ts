/**
 * Batch requests (POST /v1/schedules/batch, POST /v1/runs/batch): each item is answered on its
 * own, a refusal of the domain as the error body its single route would have answered with. Any
 * other error fails the whole request, as it would the single route.
 */
import { domainRefusal, type ApiError } from '../errors/api-error.filter.js';

/** One item's answer on the wire: what its single route returns, or its refusal. */
export type BatchAnswer<T> = T | { error: ApiError };

/** One item's outcome inside the API: its view, or the refusal (an error) its single route would throw. */
export type Settled<T> = { ok: true; value: T } | { ok: false; refusal: unknown };

/** The outcomes as the batch route answers them. */
export function batchAnswers<T>(settled: readonly Settled<T>[]): { items: BatchAnswer<T>[] } {
  return { items: settled.map((s) => (s.ok ? s.value : { error: refusalBody(s.refusal) })) };
}

/** A refusal (as refusalOf returned it) as the error body its single route answers with. */
export function refusalBody(refusal: unknown): ApiError {
  return domainRefusal(refusal)![1];
}

/** The view of a single route's one item, or its refusal thrown as the single route throws it. */
export function settledValue<T>(settled: Settled<T>): T {
  if (!settled.ok) throw settled.refusal;
  return settled.value;
}

/** Runs `step` and returns the refusal of the domain it threw, or null; any other error is thrown on. */
export async function refusalOf(step: () => Promise<unknown>): Promise<unknown> {
  try {
    await step();
    return null;
  } catch (error) {
    return refusalIn(error);
  }
}

/** `error` when it is a refusal of the domain (an item's answer); any other error is thrown on. */
export function refusalIn(error: unknown): unknown {
  if (domainRefusal(error) === null) throw error;
  return error;
}
