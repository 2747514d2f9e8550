/**
 * Reading a request body through its wire shape: zod parses it, and the first issue becomes the
 * ValidationError the domain's readers throw for the same fault, with the same code, field and
 * message, so a caller cannot tell which of the two read the body.
 */
import { z } from 'zod';
import { ValidationError, type ErrorCode } from '../errors.js';
import { join } from '../json-readers.js';

/** A check whose refusal carries its own error code (INVALID_INSTANT, PAYLOAD_TOO_LARGE, ...). */
export interface RefusalParams {
  code: ErrorCode;
}

/** A closed object: a key it does not declare is refused with UNKNOWN_FIELD, naming the ones it does. */
export function closedObject<T extends z.ZodRawShape>(shape: T) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code !== 'unrecognized_keys') return undefined;
      const field = join(fieldOf(issue.path ?? []), issue.keys[0]!);
      return `unknown field "${field}"; accepted fields here are: ${known.join(', ')}`;
    },
  });
}

/** A refinement refused with `code` and the message `message` builds from the field and the value. */
export function refusedAs<T>(code: ErrorCode, accept: (value: T) => boolean, message: (field: string, value: unknown) => string) {
  const params: RefusalParams = { code };
  return z.refine<T>(accept, { params, error: (issue) => message(fieldOf(issue.path ?? []), issue.input) });
}

/**
 * A check the domain's reader makes, for what JSON Schema cannot say (an instant's calendar, a
 * payload's size): refused with `code` and the reader's own message.
 */
export function checkedBy<T>(code: ErrorCode, read: (value: unknown, field: string) => unknown) {
  const refused = (value: unknown, field: string): ValidationError | null => {
    try {
      read(value, field);
      return null;
    } catch (error) {
      if (error instanceof ValidationError) return error;
      throw error;
    }
  };
  return refusedAs<T>(code, (value) => refused(value, '') === null, (field, value) => refused(value, field)!.message);
}

/** A field the body must carry, refused with MISSING_FIELD and `message` when it does not. */
export function required<T extends z.ZodType>(schema: T, message: string): T {
  return schema.check(refusedAs<unknown>('MISSING_FIELD', (value) => value !== undefined, () => message)) as T;
}

/** The body as `schema` reads it, or the ValidationError of its first fault. */
export function readWire<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const result = schema.safeParse(body, { reportInput: true });
  if (result.success) return result.data;
  throw refusal(firstIssue(result.error.issues));
}

function fieldOf(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}

/**
 * The issue the readers would have stopped at: a body that is no object, then a key it does not
 * declare, then a required field left out; otherwise the first field in declaration order.
 */
function firstIssue(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue {
  const rank = (issue: z.core.$ZodIssue): number => {
    if (issue.path.length === 0 && issue.code === 'invalid_type') return 0;
    if (issue.code === 'unrecognized_keys') return 1;
    if (isRefusal(issue) && issue.params.code === 'MISSING_FIELD') return 2;
    return 3;
  };
  return [...issues].sort((a, b) => rank(a) - rank(b))[0]!;
}

function isRefusal(issue: z.core.$ZodIssue): issue is z.core.$ZodIssueCustom & { params: RefusalParams } {
  return issue.code === 'custom' && typeof issue.params?.code === 'string';
}

function refusal(issue: z.core.$ZodIssue): ValidationError {
  const field = fieldOf(issue.path);
  if (isRefusal(issue)) return new ValidationError(issue.params.code, field || null, issue.message);
  switch (issue.code) {
    case 'unrecognized_keys':
      return new ValidationError('UNKNOWN_FIELD', join(field, issue.keys[0]!), issue.message);
    case 'invalid_value':
      return new ValidationError(
        'VALIDATION_FAILED',
        field,
        `${field} must be one of ${issue.values.map((v) => `"${String(v)}"`).join(', ')}; got ${JSON.stringify(issue.input)}`,
      );
    case 'invalid_type':
      if (issue.expected === 'object') return new ValidationError('VALIDATION_FAILED', field || null, `${field || 'the body'} must be a JSON object`);
      return new ValidationError('VALIDATION_FAILED', field || null, `${field || 'the body'} must be a ${issue.expected}`);
    default:
      return new ValidationError('VALIDATION_FAILED', field || null, `${field || 'the body'}: ${issue.message}`);
  }
}
