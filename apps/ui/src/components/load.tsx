/** Loading a page's data: the state of one request, re-run when its inputs change, plus the shared error and empty states. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from '../data/kairos-api.js';

export type Loaded<T> = { state: 'loading' } | { state: 'failed'; error: Error } | { state: 'ready'; value: T };

export function useLoad<T>(load: () => Promise<T>, inputs: unknown[]): [Loaded<T>, () => void] {
  const [result, setResult] = useState<Loaded<T>>({ state: 'loading' });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let current = true;
    load().then(
      (value) => current && setResult({ state: 'ready', value }),
      (error: Error) => current && setResult({ state: 'failed', error }),
    );
    return () => {
      current = false;
    };
  }, [...inputs, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return [result, reload];
}

export function Failure({ error }: { error: Error }) {
  const detail = error instanceof ApiError ? `${error.code}${error.field ? ` (${error.field})` : ''}: ${error.message}` : error.message;
  return (
    <p role="alert" class="error">
      {detail}
    </p>
  );
}

export function Loading() {
  return <p aria-live="polite">Loading…</p>;
}

export function Show<T>({ loaded, children }: { loaded: Loaded<T>; children: (value: T) => ComponentChildren }) {
  if (loaded.state === 'loading') return <Loading />;
  if (loaded.state === 'failed') return <Failure error={loaded.error} />;
  return <>{children(loaded.value)}</>;
}
