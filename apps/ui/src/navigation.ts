/** Client-side navigation under /ui: links change the path without a reload, and the app re-renders on every change. */
import { useEffect, useState } from 'preact/hooks';
import { routeOf, type UiRoute } from './logic/ui-route.js';

export function navigate(path: string): void {
  if (path === location.pathname + location.search) return;
  history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function useRoute(): UiRoute {
  const [route, setRoute] = useState(() => routeOf(location.pathname));
  useEffect(() => {
    const onChange = () => setRoute(routeOf(location.pathname));
    addEventListener('popstate', onChange);
    return () => removeEventListener('popstate', onChange);
  }, []);
  return route;
}

/** A link that navigates in place on a plain click and behaves like any link otherwise (new tab, copy). */
export function onLinkClick(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const anchor = event.currentTarget as HTMLAnchorElement;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
}
