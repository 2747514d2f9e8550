/** Reading query-string parameters with the same clear 400s as bodies. */
import { ValidationError, isUuid } from '@kairos/domain';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '@kairos/ledger';

export function pageLimit(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULT_PAGE_SIZE;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE_SIZE) {
    throw new ValidationError('VALIDATION_FAILED', 'limit', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  }
  return n;
}

export function optionalEnum<T extends string>(value: string | undefined, field: string, allowed: readonly T[]): T | undefined {
  if (value === undefined || value === '') return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ValidationError('VALIDATION_FAILED', field, `${field} must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

export function optionalUuid(value: string | undefined, field: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!isUuid(value)) throw new ValidationError('VALIDATION_FAILED', field, `${field} must be a UUID`);
  return value;
}

export function boundedInteger(value: string | undefined, field: string, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ValidationError('VALIDATION_FAILED', field, `${field} must be an integer from ${min} to ${max}`);
  }
  return n;
}
