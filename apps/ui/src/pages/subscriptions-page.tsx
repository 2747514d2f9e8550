/** Every subscription of the namespace, one cursor page at a time: where its events go, which, in what format, and whether they get through. */
import { Link } from '../components/link.js';
import { Show } from '../components/load.js';
import { Pager, usePagedLoad } from '../components/pager.js';
import { EventTypes, SubscriptionHealth } from '../components/subscription-facts.js';
import { When } from '../components/when.js';
import { kairosApi } from '../data/kairos-api.js';
import { filterInWords, urlInWords } from '../logic/subscriptions.js';
import { pathOf } from '../logic/ui-route.js';

const PAGE_SIZE = 50;

export function SubscriptionsPage() {
  const { page, paging, setPaging } = usePagedLoad((cursor) => kairosApi.subscriptions({ limit: PAGE_SIZE, cursor }));
  return (
    <>
      <h1>Subscriptions</h1>
      <p class="muted">
        A subscription is a webhook told of the namespace's events: each event of its types that passes its filter is POSTed to it, signed, and retried until the webhook takes it.
      </p>
      <Show loaded={page}>
        {(items) =>
          items.length === 0 ? (
            <p>No subscriptions yet. Create one with POST /v1/subscriptions.</p>
          ) : (
            <div class="scroll">
              <table data-testid="subscriptions">
                <caption class="sr-only">Subscriptions, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Webhook</th>
                    <th scope="col">Events</th>
                    <th scope="col">Filter</th>
                    <th scope="col">Format</th>
                    <th scope="col">State</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((s) => (
                    <tr key={s.id} data-testid={`subscription-row-${s.id}`}>
                      <td>
                        <Link href={pathOf({ page: 'subscription', id: s.id })}>{urlInWords(s.url)}</Link>
                        {s.description && <div class="muted">{s.description}</div>}
                      </td>
                      <td>
                        <EventTypes subscription={s} />
                      </td>
                      <td>{filterInWords(s.filter)}</td>
                      <td>{s.format}</td>
                      <td>
                        <SubscriptionHealth subscription={s} />
                      </td>
                      <td>
                        <When at={s.createdAt} />
                      </td>
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
