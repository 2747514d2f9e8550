/** Refusals a caller can act on: a stable code, the offending field, and a message saying what to do. */

export const ERROR_CODES = [
  'VALIDATION_FAILED',
  'MISSING_FIELD',
  'UNKNOWN_FIELD',
  'CONFLICTING_FIELDS',
  'INVALID_CRON',
  'INVALID_TIMEZONE',
  'INVALID_DURATION',
  'INVALID_INSTANT',
  'NO_FUTURE_FIRE',
  'INVALID_DATE',
  'UNKNOWN_COUNTRY',
  'UNKNOWN_CALENDAR',
  'CALENDAR_IN_USE',
  'UNKNOWN_HANDLER',
  'PAYLOAD_TOO_LARGE',
  'PAYLOAD_TOO_DEEP',
  'UNSUPPORTED_MEDIA_TYPE',
  'INVALID_CURSOR',
  'INVALID_TARGET',
  'NOT_FOUND',
  'CONFLICT',
  'IDEMPOTENCY_CONFLICT',
  'INVALID_STATE',
  'SIGNAL_ALREADY_DELIVERED',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'CROSS_SITE_REQUEST',
  'CSRF_TOKEN_INVALID',
  'RATE_LIMITED',
  'UNAVAILABLE',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Bad input. Maps to HTTP 400 (413 for PAYLOAD_TOO_LARGE); nothing was stored. */
export class ValidationError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly field: string | null,
    message: string,
  ) {
    super(message);
    this.name = 'ValidationError';
  }
}

/**
 * The caller has no valid API key (UNAUTHORIZED, HTTP 401), its key lacks the scope (FORBIDDEN, 403),
 * or a browser request lacks its session's CSRF token (CSRF_TOKEN_INVALID, 403).
 */
export class AccessError extends Error {
  constructor(
    readonly code: 'UNAUTHORIZED' | 'FORBIDDEN' | 'CSRF_TOKEN_INVALID',
    message: string,
  ) {
    super(message);
    this.name = 'AccessError';
  }
}

/** The addressed row does not exist in the caller's namespace (HTTP 404). */
export class NotFoundError extends Error {
  readonly code = 'NOT_FOUND' as const;
  constructor(
    readonly entity: string,
    readonly id: string,
  ) {
    super(`${entity} ${id} does not exist`);
    this.name = 'NotFoundError';
  }
}

/** The request is well formed but clashes with what is stored (HTTP 409). */
export class ConflictError extends Error {
  constructor(
    readonly code: 'CONFLICT' | 'INVALID_STATE' | 'IDEMPOTENCY_CONFLICT' | 'SIGNAL_ALREADY_DELIVERED' | 'CALENDAR_IN_USE',
    readonly field: string | null,
    message: string,
  ) {
    super(message);
    this.name = 'ConflictError';
  }
}
