/** A page's write actions: each button runs one, and the line below says what it did or why it failed. */
import { useState } from 'preact/hooks';
import { Failure } from './load.js';

export interface Actions {
  /** Runs `action`; once it succeeds, says `label` and reloads the page's data. */
  act: (label: string, action: () => Promise<unknown>) => Promise<void>;
  /** What the last action did, or why it failed: shown under the buttons. */
  outcome: preact.JSX.Element;
}

export function useActions(onChanged: () => void): Actions {
  const [error, setError] = useState<Error | null>(null);
  const [message, setMessage] = useState('');
  const act = async (label: string, action: () => Promise<unknown>) => {
    setError(null);
    try {
      await action();
      setMessage(label);
      onChanged();
    } catch (failure) {
      setError(failure as Error);
    }
  };
  const outcome = (
    <>
      <p aria-live="polite" class="muted">
        {message}
      </p>
      {error && <Failure error={error} />}
    </>
  );
  return { act, outcome };
}
