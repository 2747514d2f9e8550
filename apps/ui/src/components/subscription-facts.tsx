/** What the subscriptions list and a subscription's page both show: its event types, and its state with why it is disabled or failing. */
import type { Subscription } from '../data/wire/index.js';
import { StateBadge, When } from './when.js';

export function EventTypes({ subscription }: { subscription: Subscription }) {
  return (
    <ul class="event-types">
      {subscription.events.map((type) => (
        <li key={type}>
          <code>{type}</code>
        </li>
      ))}
    </ul>
  );
}

/** Its state, and why it was disabled or since when its deliveries have been failing. */
export function SubscriptionHealth({ subscription: s }: { subscription: Subscription }) {
  return (
    <>
      <StateBadge state={s.state} />
      {s.disabledReason && <span class="muted"> {s.disabledReason}</span>}
      {s.failingSince && (
        <span class="failing">
          {' '}
          failing since <When at={s.failingSince} />
        </span>
      )}
    </>
  );
}
