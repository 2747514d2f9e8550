/** The dashboard's pages and the paths under /ui that name them. */
export type UiRoute =
  | { page: 'overview' }
  | { page: 'schedules' }
  | { page: 'schedule'; id: string }
  | { page: 'runs' }
  | { page: 'run'; id: string }
  | { page: 'calendars' }
  | { page: 'calendar'; name: string }
  | { page: 'dead-letters' }
  | { page: 'cluster' }
  | { page: 'sensors' }
  | { page: 'sensor'; id: string }
  | { page: 'subscriptions' }
  | { page: 'subscription'; id: string }
  | { page: 'events' }
  | { page: 'event'; id: string }
  | { page: 'not-found'; path: string };

export const UI_BASE = '/ui';

export function routeOf(pathname: string): UiRoute {
  const path = pathname.replace(/\/+$/, '') || '/';
  if (path === UI_BASE) return { page: 'overview' };
  const rest = path.startsWith(`${UI_BASE}/`) ? path.slice(UI_BASE.length + 1).split('/') : null;
  if (rest === null) return { page: 'not-found', path: pathname };
  const [first, id, ...more] = rest;
  if (more.length > 0) return { page: 'not-found', path: pathname };
  if (first === 'schedules') return id ? { page: 'schedule', id: decodeURIComponent(id) } : { page: 'schedules' };
  if (first === 'runs') return id ? { page: 'run', id: decodeURIComponent(id) } : { page: 'runs' };
  if (first === 'calendars') return id ? { page: 'calendar', name: decodeURIComponent(id) } : { page: 'calendars' };
  if (first === 'dead-letters' && id === undefined) return { page: 'dead-letters' };
  if (first === 'cluster' && id === undefined) return { page: 'cluster' };
  if (first === 'sensors') return id ? { page: 'sensor', id: decodeURIComponent(id) } : { page: 'sensors' };
  if (first === 'events') return id ? { page: 'event', id: decodeURIComponent(id) } : { page: 'events' };
  if (first === 'subscriptions') return id ? { page: 'subscription', id: decodeURIComponent(id) } : { page: 'subscriptions' };
  return { page: 'not-found', path: pathname };
}

export function pathOf(route: Exclude<UiRoute, { page: 'not-found' }>): string {
  switch (route.page) {
    case 'overview':
      return UI_BASE;
    case 'schedules':
      return `${UI_BASE}/schedules`;
    case 'schedule':
      return `${UI_BASE}/schedules/${encodeURIComponent(route.id)}`;
    case 'runs':
      return `${UI_BASE}/runs`;
    case 'run':
      return `${UI_BASE}/runs/${encodeURIComponent(route.id)}`;
    case 'calendars':
      return `${UI_BASE}/calendars`;
    case 'calendar':
      return `${UI_BASE}/calendars/${encodeURIComponent(route.name)}`;
    case 'dead-letters':
      return `${UI_BASE}/dead-letters`;
    case 'cluster':
      return `${UI_BASE}/cluster`;
    case 'sensors':
      return `${UI_BASE}/sensors`;
    case 'sensor':
      return `${UI_BASE}/sensors/${encodeURIComponent(route.id)}`;
    case 'subscriptions':
      return `${UI_BASE}/subscriptions`;
    case 'subscription':
      return `${UI_BASE}/subscriptions/${encodeURIComponent(route.id)}`;
    case 'events':
      return `${UI_BASE}/events`;
    case 'event':
      return `${UI_BASE}/events/${encodeURIComponent(route.id)}`;
  }
}
