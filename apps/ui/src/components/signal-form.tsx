/**
 * Sending a signal to a run (write scope): while it waits for one, a form with that signal's name
 * filled in; while it is otherwise active, a disclosure to send a signal of any name ahead of the
 * wait (it is kept until the run asks). The answer, or the API's refusal, stays below either.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { kairosApi } from '../data/kairos-api.js';
import type { Checkpoint, RunState } from '../data/wire/index.js';
import { awaitedSignal, isActiveRunState, MAX_SIGNAL_NAME, signalAnswerInWords, signalRequest } from '../logic/checkpoints.js';
import { useCan } from '../session.js';
import { Failure } from './load.js';

export function SignalPanel({ run, onSent }: { run: { id: string; state: RunState; checkpoints: readonly Checkpoint[] }; onSent: () => void }) {
  const can = useCan();
  const [message, setMessage] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const awaited = awaitedSignal(run);
  const active = isActiveRunState(run.state);
  if (!can('write') || (!active && message === '' && error === null)) return null;

  /** Sends the signal; true once the API took it. Either way the run is read again (it may have resumed, or ended). */
  const send = async (name: string, bodyText: string): Promise<boolean> => {
    setMessage('');
    setError(null);
    const request = signalRequest(name, bodyText);
    if (!request.ok) {
      setError(new Error(request.message));
      return false;
    }
    try {
      setMessage(signalAnswerInWords(request.name, await kairosApi.signalRun(run.id, request.name, request.body)));
      return true;
    } catch (failure) {
      setError(failure as Error);
      return false;
    } finally {
      onSent();
    }
  };

  return (
    <section aria-label="Signals" class="signals">
      {awaited !== null ? (
        <SignalForm key={awaited} idPrefix="signal" testId="signal-form" initialName={awaited} onSend={send}>
          <p id="signal-intro">
            <strong>
              The run waits for signal <code>{awaited}</code>.
            </strong>{' '}
            Send it, with a JSON body, to resume the run.
          </p>
        </SignalForm>
      ) : (
        active && (
          <details data-testid="signal-send">
            <summary>Send a signal</summary>
            <SignalForm idPrefix="any-signal" testId="signal-form-any" initialName="" onSend={send}>
              <p id="any-signal-intro" class="muted">
                A durable function receives it from ctx.waitForSignal(name); sent before the run asks, it is kept until then. Each name once per run.
              </p>
            </SignalForm>
          </details>
        )
      )}
      <p role="status" class="muted" data-testid="signal-status">
        {message}
      </p>
      {error && <Failure error={error} />}
    </section>
  );
}

function SignalForm({
  idPrefix,
  testId,
  initialName,
  onSend,
  children,
}: {
  idPrefix: string;
  testId: string;
  initialName: string;
  onSend: (name: string, bodyText: string) => Promise<boolean>;
  children: ComponentChildren;
}) {
  const [name, setName] = useState(initialName);
  const [body, setBody] = useState('{}');
  const [sending, setSending] = useState(false);
  return (
    <form
      data-testid={testId}
      class="stack signal-form"
      aria-describedby={`${idPrefix}-intro`}
      onSubmit={(event) => {
        event.preventDefault();
        setSending(true);
        void onSend(name, body).finally(() => setSending(false));
      }}
    >
      {children}
      <label for={`${idPrefix}-name`}>Signal name</label>
      <input id={`${idPrefix}-name`} name="name" required maxLength={MAX_SIGNAL_NAME} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <label for={`${idPrefix}-body`}>Body (JSON)</label>
      <textarea id={`${idPrefix}-body`} name="body" rows={4} value={body} onInput={(e) => setBody(e.currentTarget.value)} />
      <button type="submit" disabled={sending}>
        Send signal
      </button>
    </form>
  );
}
