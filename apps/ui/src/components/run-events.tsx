/** A run's events as a table (when, kind, transition, reason, epoch, actor): a run's story on the run page, and each step's. */
import type { RunEvent } from '../data/wire/index.js';
import { runStory } from '../logic/run-story.js';
import { When } from './when.js';

export function RunEvents({ events, headingId, title, level = 2, empty }: { events: RunEvent[]; headingId: string; title: string; level?: 2 | 3 | 4; empty: string }) {
  const rows = runStory(events);
  const Heading = level === 2 ? 'h2' : level === 3 ? 'h3' : 'h4';
  return (
    <section aria-labelledby={headingId}>
      <Heading id={headingId}>{title}</Heading>
      {rows.length === 0 ? (
        <p>{empty}</p>
      ) : (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Kind</th>
                <th scope="col">Transition</th>
                <th scope="col">Reason</th>
                <th scope="col">Epoch</th>
                <th scope="col">Actor</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.id}>
                  <td>
                    <When at={row.at} /> <span class="muted">{row.sinceStart}</span>
                  </td>
                  <td>
                    {row.kind}
                    {row.words && <div class="muted">{row.words}</div>}
                  </td>
                  <td>{row.transition}</td>
                  <td>{row.reason && <code>{row.reason}</code>}</td>
                  <td>{row.epoch}</td>
                  <td>{row.actor}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
