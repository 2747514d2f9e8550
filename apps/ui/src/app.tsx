/** The dashboard's frame: session check (login when the API wants a key), navigation landmarks, and the page for the current path. */
import { useState } from 'preact/hooks';
import { Link } from './components/link.js';
import { Failure, useLoad } from './components/load.js';
import { ApiError, kairosApi } from './data/kairos-api.js';
import { pathOf, type UiRoute } from './logic/ui-route.js';
import { useRoute } from './navigation.js';
import { CalendarPage } from './pages/calendar-page.js';
import { CalendarsPage } from './pages/calendars-page.js';
import { ClusterPage } from './pages/cluster-page.js';
import { DeadLettersPage } from './pages/dead-letters-page.js';
import { EventPage } from './pages/event-page.js';
import { EventsPage } from './pages/events-page.js';
import { LoginPage } from './pages/login-page.js';
import { OverviewPage } from './pages/overview-page.js';
import { RunPage } from './pages/run-page.js';
import { RunsPage } from './pages/runs-page.js';
import { SchedulePage } from './pages/schedule-page.js';
import { SchedulesPage } from './pages/schedules-page.js';
import { SensorPage } from './pages/sensor-page.js';
import { SensorsPage } from './pages/sensors-page.js';
import { SubscriptionPage } from './pages/subscription-page.js';
import { SubscriptionsPage } from './pages/subscriptions-page.js';
import { SessionContext } from './session.js';

export function App() {
  const [session, reload] = useLoad(() => kairosApi.whoami(), []);
  if (session.state === 'failed') {
    if (session.error instanceof ApiError && session.error.status === 401) return <LoginPage onLoggedIn={reload} />;
    return <Failure error={session.error} />;
  }
  // The page loads its data while the session is asked for (no waterfall); until the answer, no
  // action is offered. A 401 then replaces the page with the login.
  const who = session.state === 'ready' ? session.value : null;
  return (
    <SessionContext.Provider value={who}>
      <Frame namespaceId={who?.namespaceId ?? ''} actor={who?.actor ?? ''} onLoggedOut={reload} />
    </SessionContext.Provider>
  );
}

const NAV = [
  { page: 'overview', label: 'Overview', href: pathOf({ page: 'overview' }) },
  { page: 'schedules', label: 'Schedules', href: pathOf({ page: 'schedules' }) },
  { page: 'calendars', label: 'Calendars', href: pathOf({ page: 'calendars' }) },
  { page: 'sensors', label: 'Sensors', href: pathOf({ page: 'sensors' }) },
  { page: 'events', label: 'Events', href: pathOf({ page: 'events' }) },
  { page: 'subscriptions', label: 'Subscriptions', href: pathOf({ page: 'subscriptions' }) },
  { page: 'runs', label: 'Runs', href: pathOf({ page: 'runs' }) },
  { page: 'dead-letters', label: 'Dead letters', href: pathOf({ page: 'dead-letters' }) },
  { page: 'cluster', label: 'Cluster', href: pathOf({ page: 'cluster' }) },
] as const;

/** The section a page of one thing belongs to, for the navigation's current link. */
const SECTION_OF: Partial<Record<UiRoute['page'], UiRoute['page']>> = { schedule: 'schedules', run: 'runs', calendar: 'calendars', sensor: 'sensors', subscription: 'subscriptions', event: 'events' };

function Frame({ namespaceId, actor, onLoggedOut }: { namespaceId: string; actor: string; onLoggedOut: () => void }) {
  const route = useRoute();
  const [loggingOut, setLoggingOut] = useState(false);
  const section = SECTION_OF[route.page] ?? route.page;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Kairos</span>
        <nav aria-label="Sections">
          <ul>
            {NAV.map((item) => (
              <li key={item.page}>
                <Link href={item.href} current={section === item.page}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who" title={`namespace ${namespaceId}`}>
          {actor}
        </span>
        {actor !== 'anonymous' && actor !== '' && (
          <button
            type="button"
            disabled={loggingOut}
            onClick={async () => {
              setLoggingOut(true);
              await kairosApi.logout().catch(() => undefined);
              onLoggedOut();
            }}
          >
            Log out
          </button>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        {route.page === 'overview' && <OverviewPage />}
        {route.page === 'schedules' && <SchedulesPage />}
        {route.page === 'schedule' && <SchedulePage id={route.id} />}
        {route.page === 'run' && <RunPage id={route.id} />}
        {route.page === 'runs' && <RunsPage />}
        {route.page === 'calendars' && <CalendarsPage />}
        {route.page === 'calendar' && <CalendarPage name={route.name} />}
        {route.page === 'dead-letters' && <DeadLettersPage />}
        {route.page === 'cluster' && <ClusterPage />}
        {route.page === 'sensors' && <SensorsPage />}
        {route.page === 'sensor' && <SensorPage id={route.id} />}
        {route.page === 'subscriptions' && <SubscriptionsPage />}
        {route.page === 'subscription' && <SubscriptionPage id={route.id} />}
        {route.page === 'events' && <EventsPage />}
        {route.page === 'event' && <EventPage id={route.id} />}
        {route.page === 'not-found' && (
          <>
            <h1>Not found</h1>
            <p>
              Nothing lives at {route.path}. <Link href={pathOf({ page: 'schedules' })}>Back to the schedules</Link>
            </p>
          </>
        )}
      </main>
    </>
  );
}
