/**
 * The cluster as the ledger sees it: leader lease, scheduler sessions, each process's host clock
 * against the database's, the namespace's queues and their limits, the versions of the code in
 * flight (whether an old version's workers may be stopped), workers (where the API lists them),
 * run and queue counts, outages. A queue with queued runs shows them by priority and by fairness key.
 */
import { Show, useLoad } from '../components/load.js';
import { PriorityLegend, QueuedShares, hasQueuedShares } from '../components/queued-shares.js';
import { StateBadge, When } from '../components/when.js';
import { kairosApi } from '../data/kairos-api.js';
import type { Queue } from '../data/wire/index.js';
import { queueLoad, rateInWords } from '../logic/limits.js';
import { versionInWords } from '../logic/versions.js';

/** Past this, a host's clock is worth an operator's look (Kairos itself keeps time by the database). */
const CLOCK_WARNING_MS = 1_000;

/** A host clock's distance from the database's, as a person reads it: "clock 0.3 s behind", flagged past a second. */
function ClockOffset({ offsetMs }: { offsetMs: number | null }) {
  if (offsetMs === null) return <span>clock not measured yet</span>;
  const seconds = (Math.abs(offsetMs) / 1_000).toFixed(Math.abs(offsetMs) < 1_000 ? 3 : 1);
  const text = `clock ${seconds} s ${offsetMs > 0 ? 'behind' : 'ahead of'} the database`;
  return Math.abs(offsetMs) > CLOCK_WARNING_MS ? <strong class="error" title="fix this host's time sync (NTP)">{text}</strong> : <span>{text}</span>;
}

/** The width of a queue's load bar, in pixels. */
const LOAD_BAR_WIDTH = 96;

/** Running against the limit as a small bar (full: the queue's places are taken), or only the count when the queue has no limit. */
function QueueLoad({ queue }: { queue: Queue }) {
  const load = queueLoad(queue);
  if (load.fraction === null) return <span>{queue.running}</span>;
  return (
    <span class="queue-load">
      <svg class={load.fraction >= 1 ? 'load-bar full' : 'load-bar'} width={LOAD_BAR_WIDTH} height={10} viewBox={`0 0 ${LOAD_BAR_WIDTH} 10`} role="img" aria-label={load.words}>
        <rect class="load-track" width={LOAD_BAR_WIDTH} height={10} rx={3} />
        <rect class="load-fill" width={LOAD_BAR_WIDTH * load.fraction} height={10} rx={3} />
      </svg>{' '}
      {queue.running}/{queue.maxRunning}
    </span>
  );
}

function Queues() {
  const [queues] = useLoad(() => kairosApi.queues(), []);
  return (
    <section aria-labelledby="queues">
      <h2 id="queues">Queues</h2>
      <Show loaded={queues}>
        {(list) =>
          list === null ? (
            <p>This API does not list queues.</p>
          ) : list.length === 0 ? (
            <p>No queues with limits, active runs or live workers.</p>
          ) : (
            <>
              <div class="scroll">
                <table data-testid="queues">
                  <caption class="sr-only">Queues of the namespace, by name: running against the limit, queued, held back by a limit, rate limit, live workers</caption>
                  <thead>
                    <tr>
                      <th scope="col">Queue</th>
                      <th scope="col">Running / limit</th>
                      <th scope="col">Queued</th>
                      <th scope="col">Held</th>
                      <th scope="col">Rate limit</th>
                      <th scope="col">Workers</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.map((q) => (
                      <tr key={q.name} data-testid={`queue-${q.name}`}>
                        <td>
                          <code>{q.name}</code>
                        </td>
                        <td>
                          <QueueLoad queue={q} />
                        </td>
                        <td>{q.queued}</td>
                        <td>{q.held > 0 ? <strong title="held back by a limit until a place frees">{q.held}</strong> : 0}</td>
                        <td>{rateInWords(q.rate)}</td>
                        <td>{q.workers}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <QueuedByPriority queues={list} />
            </>
          )
        }
      </Show>
    </section>
  );
}

/** The queued runs of each queue that has some, by priority and by fairness key; nothing when none has (or the API does not count them). */
function QueuedByPriority({ queues }: { queues: readonly Queue[] }) {
  const shown = queues.filter(hasQueuedShares);
  if (shown.length === 0) return null;
  return (
    <section aria-labelledby="queued-by-priority" data-testid="queued-by-priority">
      <h3 id="queued-by-priority">Queued runs by priority and fairness key</h3>
      <p class="muted">
        Each queue's runs in state queued, held or not. The next start of a queue goes to its best priority (1 first); within a priority, the fairness keys take starts in proportion
        to their weights.
      </p>
      {shown.map((q) => (
        <QueuedShares key={q.name} queue={q} />
      ))}
      <PriorityLegend />
    </section>
  );
}

function Versions() {
  const [versions] = useLoad(() => kairosApi.codeVersions(), []);
  return (
    <section aria-labelledby="versions">
      <h2 id="versions">Versions</h2>
      <Show loaded={versions}>
        {(list) =>
          list === null ? (
            <p>This API does not list versions.</p>
          ) : list.length === 0 ? (
            <p>No live workers and no active runs claimed by one.</p>
          ) : (
            <>
              <p class="muted">A run that stored a checkpoint is claimed only by workers of its version. Once a version has no active runs, its workers may be stopped.</p>
              <div class="scroll">
                <table data-testid="versions">
                  <caption class="sr-only">Versions of the code by queue: live workers, active runs of the namespace, runs waiting for a worker of their version, and whether its workers may be stopped</caption>
                  <thead>
                    <tr>
                      <th scope="col">Queue</th>
                      <th scope="col">Version</th>
                      <th scope="col">Workers</th>
                      <th scope="col">Active runs</th>
                      <th scope="col">Waiting for it</th>
                      <th scope="col">Stopping its workers</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.map((v) => {
                      const said = versionInWords(v);
                      return (
                        <tr key={`${v.queue}/${v.version}`} data-testid={`version-${v.queue}-${v.version}`}>
                          <td>
                            <code>{v.queue}</code>
                          </td>
                          <td>
                            <code>{v.version}</code>
                          </td>
                          <td>{v.workers === 0 && v.activeRuns > 0 ? <strong title="its runs wait until a worker of this version runs">0</strong> : v.workers}</td>
                          <td>{v.activeRuns}</td>
                          <td>{v.pinnedWaiting > 0 ? <strong title="held until a worker of this version runs (VERSION_UNAVAILABLE)">{v.pinnedWaiting}</strong> : 0}</td>
                          <td>{said.stoppable ? said.words : <strong>{said.words}</strong>}</td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
            </>
          )
        }
      </Show>
    </section>
  );
}

export function ClusterPage() {
  const [cluster] = useLoad(() => kairosApi.cluster(), []);
  const [workers] = useLoad(() => kairosApi.workers(), []);
  return (
    <>
      <h1>Cluster</h1>
      <Show loaded={cluster}>
        {(c) => (
          <>
            <section aria-labelledby="leader">
              <h2 id="leader">Leader</h2>
              {c.leader === null ? (
                <p>No scheduler has ever led.</p>
              ) : (
                <p>
                  <code>{c.leader.holder}</code> · epoch {c.leader.epoch} · lease until <When at={c.leader.expiresAt} /> ·{' '}
                  <StateBadge state={c.leader.live ? 'live' : 'expired'} />
                </p>
              )}
            </section>
            <section aria-labelledby="sessions">
              <h2 id="sessions">Schedulers</h2>
              {c.sessions.length === 0 ? (
                <p>No scheduler sessions.</p>
              ) : (
                <ul>
                  {c.sessions.map((s) => (
                    <li key={s.holder}>
                      <code>{s.holder}</code> · since <When at={s.startedAt} /> · last seen <When at={s.lastSeenAt} />
                    </li>
                  ))}
                </ul>
              )}
              {c.schedulers.length > 0 && (
                <ul aria-label="scheduler hosts">
                  {c.schedulers.map((m) => (
                    <li key={m.holder}>
                      <code>{m.holder}</code> on {m.hostname} (pid {m.pid}) · <ClockOffset offsetMs={m.clockOffsetMs} /> ·{' '}
                      <StateBadge state={m.live ? 'live' : 'expired'} />
                    </li>
                  ))}
                </ul>
              )}
            </section>
            <section aria-labelledby="counts">
              <h2 id="counts">Runs and queue</h2>
              <dl class="pairs">
                {Object.entries(c.runs).map(([state, n]) => (
                  <div key={`run-${state}`}>
                    <dt>runs {state}</dt>
                    <dd>{n}</dd>
                  </div>
                ))}
                {Object.entries(c.queue).map(([state, n]) => (
                  <div key={`queue-${state}`}>
                    <dt>queue {state}</dt>
                    <dd>{n}</dd>
                  </div>
                ))}
              </dl>
            </section>
            <section aria-labelledby="outages">
              <h2 id="outages">Outages</h2>
              {c.outages.length === 0 ? (
                <p>No outages recorded.</p>
              ) : (
                <ul>
                  {c.outages.map((o) => (
                    <li key={o.startedAt}>
                      <When at={o.startedAt} /> to {o.endedAt ? <When at={o.endedAt} /> : 'now'}
                    </li>
                  ))}
                </ul>
              )}
            </section>
          </>
        )}
      </Show>
      <Queues />
      <Versions />
      <section aria-labelledby="workers">
        <h2 id="workers">Workers</h2>
        <Show loaded={workers}>
          {(list) =>
            list === null ? (
              <p>This API does not list workers.</p>
            ) : list.length === 0 ? (
              <p>No workers registered.</p>
            ) : (
              <ul>
                {list.map((w) => (
                  <li key={w.id}>
                    <code>{w.id}</code> · queue {w.queue} · version {w.version} · handlers {w.handlers.join(', ')} · last seen <When at={w.lastSeenAt} /> ·{' '}
                    <ClockOffset offsetMs={w.clockOffsetMs} />
                  </li>
                ))}
              </ul>
            )
          }
        </Show>
      </section>
    </>
  );
}
