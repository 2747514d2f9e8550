/** Every sensor of the namespace, one cursor page at a time: how often it is evaluated, by which handler, its last evaluation and the next. */
import { Link } from '../components/link.js';
import { Show } from '../components/load.js';
import { Pager, usePagedLoad } from '../components/pager.js';
import { StateBadge, When } from '../components/when.js';
import { kairosApi } from '../data/kairos-api.js';
import type { Sensor } from '../data/wire/index.js';
import { durationInWords } from '../logic/spec-words.js';
import { pathOf } from '../logic/ui-route.js';

const PAGE_SIZE = 50;

export function SensorsPage() {
  const { page, paging, setPaging } = usePagedLoad((cursor) => kairosApi.sensors({ limit: PAGE_SIZE, cursor }));
  return (
    <>
      <h1>Sensors</h1>
      <p class="muted">A sensor is a handler evaluated every so often with its cursor; it answers the runs to ask for (each by a run key, asked for once) and its new cursor.</p>
      <Show loaded={page}>
        {(items) =>
          items.length === 0 ? (
            <p>No sensors yet. Declare one with POST /v1/sensors or kairos apply.</p>
          ) : (
            <div class="scroll">
              <table data-testid="sensors">
                <caption class="sr-only">Sensors, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Every</th>
                    <th scope="col">Evaluated by</th>
                    <th scope="col">Status</th>
                    <th scope="col">Last evaluation</th>
                    <th scope="col">Next evaluation</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((s) => (
                    <tr key={s.id} data-testid={`sensor-row-${s.name}`}>
                      <td>
                        <Link href={pathOf({ page: 'sensor', id: s.id })}>{s.name}</Link>
                        {Object.entries(s.labels).map(([k, v]) => (
                          <span key={k} class="label">
                            {k}:{v}
                          </span>
                        ))}
                      </td>
                      <td>every {durationInWords(s.every)}</td>
                      <td>
                        <code>{s.target.name}</code> <span class="muted">on {s.target.queue}</span>
                      </td>
                      <td>
                        <StateBadge state={s.paused ? 'paused' : 'active'} />
                      </td>
                      <td>
                        <LastTick sensor={s} />
                      </td>
                      <td>{s.evaluating ? <span>evaluating now</span> : s.paused ? <span class="muted">paused</span> : <When at={s.nextEvaluationAt} />}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Show>
      <Pager paging={paging} onChange={setPaging} />
    </>
  );
}

function LastTick({ sensor }: { sensor: Sensor }) {
  const tick = sensor.lastTick;
  if (tick === null) return <span class="muted">none yet</span>;
  return (
    <>
      <StateBadge state={tick.state} /> <When at={tick.finishedAt ?? tick.startedAt} />
      {tick.created > 0 && <span class="muted"> · {tick.created === 1 ? '1 run' : `${tick.created} runs`}</span>}
    </>
  );
}
