/**
 * One subscription: where its events go and which, pause and resume, a test delivery, and a
 * picture of its recent delivery attempts over time (one bar per attempt, as tall as it took, in
 * the colour of how it went), then the deliveries themselves with their last answers. The page
 * reads the subscription and its deliveries again every few seconds, so a test shows up as it is
 * delivered.
 */
import { useEffect } from 'preact/hooks';
import { DeliveryAttempts } from '../components/delivery-attempts.js';
import { useActions } from '../components/actions.js';
import { Link } from '../components/link.js';
import { Show, useLoad } from '../components/load.js';
import { EventTypes, SubscriptionHealth } from '../components/subscription-facts.js';
import { StateBadge, When } from '../components/when.js';
import { kairosApi } from '../data/kairos-api.js';
import type { Subscription, SubscriptionDelivery } from '../data/wire/index.js';
import { filterInWords, lastAnswerInWords, urlInWords } from '../logic/subscriptions.js';
import { pathOf } from '../logic/ui-route.js';
import { useCan } from '../session.js';
import { DefinitionBlock, type DefinitionRow } from '../components/definition.js';

/** The deliveries drawn and listed: the newest this many. */
const DELIVERIES_SHOWN = 50;
/** How often the page reads the subscription and its deliveries again. */
const REFRESH_MS = 5_000;

export function SubscriptionPage({ id }: { id: string }) {
  const [subscription, reload] = useLoad(() => kairosApi.subscription(id), [id]);
  const [deliveries, reloadDeliveries] = useLoad(() => kairosApi.deliveries(id, DELIVERIES_SHOWN), [id]);
  useEffect(() => {
    const timer = setInterval(() => {
      reload();
      reloadDeliveries();
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload, reloadDeliveries]);
  return (
    <Show loaded={subscription}>
      {(s) => (
        <>
          <h1>{urlInWords(s.url)}</h1>
          <p class="lead">
            {s.description && <>{s.description} · </>}
            {s.format === 'slack' ? 'Slack messages' : 'JSON events'} · <SubscriptionHealth subscription={s} />
          </p>
          <Actions
            subscription={s}
            onChanged={() => {
              reload();
              reloadDeliveries();
            }}
          />
          <Definition subscription={s} />
          <section aria-labelledby="deliveries">
            <h2 id="deliveries">Deliveries</h2>
            <Show loaded={deliveries}>
              {(page) =>
                page.items.length === 0 ? (
                  <p>No deliveries yet.</p>
                ) : (
                  <>
                    <p class="muted">
                      Every attempt of the newest {page.items.length === 1 ? 'delivery' : `${page.items.length} deliveries`} where it was made, oldest left: each bar as tall as
                      the attempt took. Point at a bar for its story.
                    </p>
                    <DeliveryAttempts deliveries={page.items} labelledBy="deliveries" />
                    <Deliveries deliveries={page.items} />
                  </>
                )
              }
            </Show>
          </section>
        </>
      )}
    </Show>
  );
}

function Actions({ subscription, onChanged }: { subscription: Subscription; onChanged: () => void }) {
  const can = useCan();
  const { act, outcome } = useActions(onChanged);
  if (!can('write')) return null;
  const id = subscription.id;
  return (
    <section aria-label="Actions" class="actions">
      {subscription.state === 'active' ? (
        <>
          <button type="button" onClick={() => act('Paused: events meanwhile are not delivered to it.', () => kairosApi.pauseSubscription(id))}>
            Pause
          </button>
          <button type="button" onClick={() => act('Test sent: a ping event, delivered like any other; it appears below within seconds.', () => kairosApi.testSubscription(id))}>
            Send test
          </button>
        </>
      ) : (
        <button
          type="button"
          onClick={() => act(subscription.state === 'disabled' ? 'Resumed: enabled again, its failures forgotten.' : 'Resumed.', () => kairosApi.resumeSubscription(id))}
        >
          Resume
        </button>
      )}
      {outcome}
    </section>
  );
}

function Definition({ subscription: s }: { subscription: Subscription }) {
  const rows: DefinitionRow[] = [
    ['Webhook', <span title="The path's secret-looking tail and the query are not shown">{urlInWords(s.url)}</span>],
    ['Events', <EventTypes subscription={s} />],
    ['Filter', <Filter filter={s.filter} />],
    ['Format', s.format],
    ['Description', s.description ?? 'none'],
    ['Created', <When at={s.createdAt} />],
    ['Updated', <When at={s.updatedAt} />],
  ];
  return <DefinitionBlock rows={rows} />;
}

/** The filter in words, with a link to each schedule it names. */
function Filter({ filter }: { filter: Subscription['filter'] }) {
  return (
    <>
      {filterInWords(filter)}
      {filter.scheduleIds.length > 0 && (
        <ul class="run-links">
          {filter.scheduleIds.map((id) => (
            <li key={id}>
              <Link href={pathOf({ page: 'schedule', id })}>{id.slice(0, 13)}…</Link>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** The deliveries drawn above, newest first: the event, how it stands, its attempts and the last answer. */
function Deliveries({ deliveries }: { deliveries: readonly SubscriptionDelivery[] }) {
  return (
    <div class="scroll">
      <table data-testid="deliveries">
        <caption class="sr-only">Deliveries, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Created</th>
            <th scope="col">State</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last answer</th>
            <th scope="col">Finished</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((d) => (
            <tr key={d.id} data-delivery-id={d.id} data-state={d.state}>
              <td>
                <details>
                  <summary>
                    <code>{d.eventType}</code>
                  </summary>
                  <pre>{JSON.stringify(d.body, null, 2)}</pre>
                </details>
              </td>
              <td>
                <When at={d.createdAt} />
              </td>
              <td>
                <StateBadge state={d.state} />
                {d.nextAttemptAt && (
                  <span class="muted">
                    {' '}
                    next attempt <When at={d.nextAttemptAt} />
                  </span>
                )}
              </td>
              <td data-testid="delivery-attempt-count">{d.attempts.length}</td>
              <td>{lastAnswerInWords(d)}</td>
              <td>
                <When at={d.finishedAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
