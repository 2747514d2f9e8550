/** A durable function's checkpoints as a timeline: kind, name, state in words and colour, started → finished, the wake instant, and the result or signal body on expand. */
import type { Checkpoint } from '../data/wire/index.js';
import { checkpointRows } from '../logic/checkpoints.js';
import { When } from './when.js';

export function CheckpointTimeline({ checkpoints }: { checkpoints: readonly Checkpoint[] }) {
  const rows = checkpointRows(checkpoints);
  return (
    <section data-testid="checkpoints" aria-labelledby="checkpoints">
      <h2 id="checkpoints">Checkpoints</h2>
      <p class="muted">What the durable function stored, in the order it began: a step's result is returned on a replay, a sleep or a wait parks the run without a worker.</p>
      <ol class="checkpoints">
        {rows.map((row) => (
          <li key={row.name} data-testid={`checkpoint-${row.name}`} class={`checkpoint checkpoint-${row.state}`}>
            <p>
              <span class="checkpoint-kind">
                <span class="checkpoint-icon" aria-hidden="true">
                  {row.icon}
                </span>{' '}
                {row.kindLabel}
              </span>{' '}
              <code>{row.name}</code> <span class={`badge badge-${row.state}`}>{row.stateLabel}</span> <span class="muted">{row.stateWords}</span>
            </p>
            <p class="checkpoint-times">
              <When at={row.startedAt} /> → {row.finishedAt === null ? <span class="muted">not yet</span> : <When at={row.finishedAt} />}
              {row.took && <span class="muted"> ({row.took})</span>}
              {row.wake && (
                <>
                  {' '}
                  · {row.wake.label} <When at={row.wake.at} />
                </>
              )}
            </p>
            {row.result !== null && (
              <details>
                <summary>{row.resultLabel}</summary>
                <pre>{row.result}</pre>
              </details>
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}
