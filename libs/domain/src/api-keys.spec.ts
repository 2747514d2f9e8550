import { describe, expect, it } from 'vitest';
import { API_SCOPES, effectiveScopes, issueApiKey, parseApiKey, scopeAllows, secretMatches, type AnonymousAccess, type ApiScope } from './api-keys.js';

const OPEN: AnonymousAccess = { namespaceId: 'default', scopes: API_SCOPES };

describe('effectiveScopes: a key never has less than anonymous access', () => {
  it.each<[string, { namespaceId: string; scopes: ApiScope[] }, AnonymousAccess | null, ApiScope[]]>([
    ['auth required: a read key reads', { namespaceId: 'default', scopes: ['read'] }, null, ['read']],
    ['auth required: a write key writes', { namespaceId: 'default', scopes: ['write'] }, null, ['write']],
    ['open: a read key of the open namespace does what anonymous does', { namespaceId: 'default', scopes: ['read'] }, OPEN, ['read', 'write', 'admin']],
    ['open: a write key of the open namespace too', { namespaceId: 'default', scopes: ['write'] }, OPEN, ['read', 'write', 'admin']],
    ['open: a read key of another namespace keeps its own scopes there', { namespaceId: 'acme', scopes: ['read'] }, OPEN, ['read']],
    ['open: an admin key of another namespace keeps admin', { namespaceId: 'acme', scopes: ['admin'] }, OPEN, ['admin']],
    ['anonymous limited to read: a write key keeps write', { namespaceId: 'default', scopes: ['write'] }, { namespaceId: 'default', scopes: ['read'] }, ['read', 'write']],
  ])('%s', (_name, key, anonymous, expected) => {
    expect(effectiveScopes(key, anonymous)).toEqual(expected);
  });

  it('holds for every combination: whatever anonymous may do in its namespace, a key of that namespace may do', () => {
    const subsets: ApiScope[][] = [[], ['read'], ['write'], ['admin'], ['read', 'write'], ['read', 'admin'], ['write', 'admin'], [...API_SCOPES]];
    for (const keyScopes of subsets) {
      for (const anonymousScopes of subsets) {
        const anonymous = { namespaceId: 'default', scopes: anonymousScopes };
        const scopes = effectiveScopes({ namespaceId: 'default', scopes: keyScopes }, anonymous);
        for (const needed of API_SCOPES) {
          if (scopeAllows(anonymousScopes, needed)) expect(scopeAllows(scopes, needed), `${keyScopes} vs ${anonymousScopes}: ${needed}`).toBe(true);
          if (scopeAllows(keyScopes, needed)) expect(scopeAllows(scopes, needed)).toBe(true);
        }
      }
    }
  });
});

describe('API keys', () => {
  it('issues keys that parse back and match only their own secret', () => {
    const key = issueApiKey();
    const parsed = parseApiKey(key.token)!;
    expect(parsed.prefix).toBe(key.prefix);
    expect(secretMatches(parsed.secret, key.secretHash)).toBe(true);
    expect(secretMatches(`${parsed.secret.slice(0, -1)}x`, key.secretHash)).toBe(false);
  });
});
