/** Who the dashboard acts as: the namespace and scopes of the key (or the local anonymous access), so pages hide what it may not do. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Scope, WhoAmI } from './data/wire/index.js';

export const SessionContext = createContext<WhoAmI | null>(null);

export function useCan(): (scope: Scope) => boolean {
  const session = useContext(SessionContext);
  return (scope) => session !== null && session.scopes.includes(scope);
}
