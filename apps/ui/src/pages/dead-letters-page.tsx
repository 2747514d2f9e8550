/** Runs that ended dead: why, inspect one, republish it as a new run. */
import { useState } from 'preact/hooks';
import { Link } from '../components/link.js';
import { Failure, Show } from '../components/load.js';
import { Pager, usePagedLoad } from '../components/pager.js';
import { When } from '../components/when.js';
import { kairosApi } from '../data/kairos-api.js';
import { pathOf } from '../logic/ui-route.js';
import { useCan } from '../session.js';

export function DeadLettersPage() {
  const { page, reload, paging, setPaging } = usePagedLoad((cursor) => kairosApi.deadLetters({ limit: 50, cursor }));
  const [inspected, setInspected] = useState<string | null>(null);
  const [republished, setRepublished] = useState<Record<string, string>>({});
  const [error, setError] = useState<Error | null>(null);
  const can = useCan();
  return (
    <>
      <h1>Dead letters</h1>
      {error && <Failure error={error} />}
      <Show loaded={page}>
        {(items) =>
          items.length === 0 ? (
            <p>No dead letters.</p>
          ) : (
            <ul class="cards">
              {items.map((r) => (
                <li key={r.id} data-run-id={r.id}>
                  <p>
                    <Link href={pathOf({ page: 'run', id: r.id })}>{r.id}</Link> · <code>{r.reasonCode}</code> {r.reasonText} · ended <When at={r.finishedAt} />
                  </p>
                  <div class="actions">
                    <button type="button" aria-expanded={inspected === r.id} onClick={() => setInspected(inspected === r.id ? null : r.id)}>
                      Inspect
                    </button>
                    {can('write') &&
                      (republished[r.id] ? (
                        <span role="status">
                          Republished as <Link href={pathOf({ page: 'run', id: republished[r.id]! })}>{republished[r.id]}</Link>
                        </span>
                      ) : (
                        <button
                          type="button"
                          onClick={() =>
                            kairosApi.republish(r.id).then((run) => {
                              setRepublished((known) => ({ ...known, [r.id]: run.id }));
                            }, setError)
                          }
                        >
                          Republish
                        </button>
                      ))}
                  </div>
                  {inspected === r.id && <pre>{JSON.stringify({ target: r.target, payload: r.payload, error: r.error, attempt: r.attempt }, null, 2)}</pre>}
                </li>
              ))}
            </ul>
          )
        }
      </Show>
      <Pager paging={paging} onChange={setPaging}>
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </Pager>
    </>
  );
}
