/** Where a refusal of POST /v1/apply lies: the item of the declaration, and its field. */
import { ConflictError, ValidationError } from '@kairos/domain';

/**
 * A refusal of item `index` (`name`) of the declaration's `list`, said where it lies: its field
 * under `list[i]`, and its message prefixed with the item and the field
 * (`schedules[1] (invoice-sweep).cron: ...`).
 */
export function locatedIn(list: 'schedules' | 'sensors' | 'calendars', error: unknown, index: number, name: string | undefined): unknown {
  if (!(error instanceof ValidationError || error instanceof ConflictError)) return error;
  const at = `${list}[${index}]`;
  const field = error.field ? `${at}.${error.field}` : at;
  const message = `${at}${name === undefined ? '' : ` (${name})`}${error.field ? `.${error.field}` : ''}: ${error.message}`;
  return error instanceof ValidationError ? new ValidationError(error.code, field, message) : new ConflictError(error.code, field, message);
}
