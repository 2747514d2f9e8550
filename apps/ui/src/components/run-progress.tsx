/** A run's progress (ctx.progress): a bar when the value says how far along it is, else its JSON. */
import type { JsonValue } from '../data/wire/index.js';
import { progressShape } from '../logic/progress.js';

export function RunProgress({ progress }: { progress: JsonValue | null }) {
  const shape = progressShape(progress);
  if (shape.kind === 'none') return null;
  return (
    <section aria-labelledby="progress" data-testid="run-progress">
      <h2 id="progress">Progress</h2>
      {shape.kind === 'bar' ? (
        <>
          <progress class="run-progress" style={{ width: '20rem' }} max={1} value={shape.fraction} aria-label="Progress" title={shape.json} />{' '}
          <span data-testid="run-progress-label">{shape.label}</span>
        </>
      ) : (
        <pre data-testid="run-progress-json">{shape.json}</pre>
      )}
    </section>
  );
}
