/**
 * The cookies of a browser session: `kairos_session` (HttpOnly, the credential) and `XSRF-TOKEN`
 * (readable by the page, which echoes it in an `X-CSRF-Token` or `X-XSRF-Token` header on every
 * state-changing request; axios, which Bull Board uses, does so by itself). Both SameSite=Strict,
 * Secure when the request came over HTTPS.
 */
import type { IncomingHttpHeaders } from 'node:http';

export const SESSION_COOKIE = 'kairos_session';
export const CSRF_COOKIE = 'XSRF-TOKEN';
export const CSRF_HEADERS = ['x-csrf-token', 'x-xsrf-token'] as const;

/** The cookie `name` from a Cookie header, or undefined. */
export function cookieValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  for (const part of (headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return decodeURIComponent(part.slice(at + 1).trim());
  }
  return undefined;
}

/** The CSRF token the request echoes, from either header name. */
export function echoedCsrfToken(headers: IncomingHttpHeaders): string | undefined {
  for (const name of CSRF_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

export function sessionCookies(token: string, csrfToken: string, maxAgeMs: number, secure: boolean): string[] {
  const common = `Path=/; SameSite=Strict; Max-Age=${Math.floor(maxAgeMs / 1000)}${secure ? '; Secure' : ''}`;
  return [`${SESSION_COOKIE}=${token}; HttpOnly; ${common}`, `${CSRF_COOKIE}=${csrfToken}; ${common}`];
}

export function clearedSessionCookies(secure: boolean): string[] {
  return sessionCookies('', '', 0, secure);
}
