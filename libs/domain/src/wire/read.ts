/**
 * Reading a request body through its wire shape: zod parses it, and the first issue becomes the
 * ValidationError the domain would throw for the same fault, with the same code, field and
 * message. A declaration words its own faults where the readers always did (an integer's range,
 * a name's pattern); the rules only the domain knows (a cron expression, an instant's calendar, a
 * webhook's headers) run as the domain's functions inside the declaration and refuse with the
 * domain's own errors.
 */
import { z } from 'zod';
import { ValidationError, type ErrorCode } from '../errors.js';
import { checkStorableText, join } from '../json-readers.js';

/** A refusal of the domain's: its code, and the error it makes for the field the issue lands on. */
export interface RefusalParams {
  code: ErrorCode;
  /** Its field may lie below the issue's (a header under `headers`). */
  refusal: (field: string) => ValidationError;
}

type Read = (value: unknown, field: string) => unknown;

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

/** Parameters wording a schema's or a check's fault from the field it lands on. */
export function worded(message: (field: string) => string) {
  return { error: (issue: z.core.$ZodRawIssue) => message(fieldOf(issue.path ?? [])) };
}

/**
 * A check that `read`, a domain function, accepts the value; refused with the error `read` throws.
 * `when` decides whether it runs after other faults were found (by default only if none abort).
 */
export function checkedBy<T>(read: Read, when?: (payload: z.core.ParsePayload) => boolean) {
  return z.superRefine<T>(
    (value, payload) => {
      const issue = refusalIssue(read, value);
      if (issue) payload.addIssue(issue);
    },
    when && { when },
  );
}

/**
 * `schema`, with `read` screening the raw value before it: for a fault the readers find before
 * any shape does (a target that is absent, no object, or of no known type), refused as `read`
 * refuses it. The document shows `schema`.
 */
export function screenedBy<T extends z.ZodType>(read: Read, schema: T) {
  return z.preprocess((value, payload) => {
    const issue = refusalIssue(read, value);
    if (issue) payload.addIssue(issue);
    return value;
  }, schema);
}

/** `schema`, refusing an absent or null value with MISSING_FIELD and the message `message` words. */
export function present<T extends z.ZodType>(schema: T, message: (field: string) => string) {
  return screenedBy((value, field) => {
    if (value === undefined || value === null) throw new ValidationError('MISSING_FIELD', field, message(field));
  }, schema);
}

/** A string as the readers read text: 1 to `maxLength` characters Postgres can store as given. */
export function text(maxLength: number) {
  const length = worded((field) => `${field} must be 1 to ${maxLength} characters long`);
  return z
    .string()
    .min(1, length)
    .max(maxLength, length)
    .check(checkedBy((value, field) => checkStorableText(value as string, field)));
}

/** An integer from `min` to `max`, refused in one wording whatever is wrong with it. */
export function integer(min: number, max: number) {
  const range = worded((field) => `${field} must be an integer from ${min} to ${max}`);
  // A value out of range stops the reading of its object there: checks over the whole (a graph of steps) see only values that passed.
  return z.int(range).min(min, { ...range, abort: true }).max(max, { ...range, abort: true });
}

/** A number from `min` to `max`, refused in one wording whatever is wrong with it. */
export function number(min: number, max: number) {
  const range = worded((field) => `${field} must be a number from ${min} to ${max}`);
  return z.number(range).min(min, range).max(max, range);
}

/** A field the body must carry, refused with MISSING_FIELD and `message` when it does not. */
export function required<T extends z.ZodType>(schema: T, message: string): T {
  return schema.check(
    checkedBy((value, field) => {
      if (value === undefined) throw new ValidationError('MISSING_FIELD', field, message);
    }),
  ) as T;
}

/**
 * The body as `schema` reads it, or the ValidationError of its first fault. `order` lists the
 * body's fields in the order the readers report their faults, when that is not the order the
 * schema declares them in; '' stands for a check of the body as a whole.
 */
export function readWire<T extends z.ZodType>(schema: T, body: unknown, order?: readonly string[]): z.output<T> {
  const result = schema.safeParse(body, { reportInput: true, error: wording });
  if (result.success) return result.data;
  throw refusal(firstIssue(result.error.issues, order));
}

/** A path as fields are named: `steps[2].dependsOn[0]`. */
function fieldOf(path: readonly PropertyKey[]): string {
  return path.reduce<string>((field, key) => (typeof key === 'number' ? `${field}[${key}]` : field ? `${field}.${String(key)}` : String(key)), '');
}

function refused(read: Read, value: unknown, field: string): ValidationError | null {
  try {
    read(value, field);
    return null;
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
}

function refusalIssue(read: Read, value: unknown): z.core.$ZodRawIssue | null {
  const error = refused(read, value, '');
  if (error === null) return null;
  const params: RefusalParams = { code: error.code, refusal: (field) => refused(read, value, field)! };
  return { code: 'custom', input: value, message: error.message, params };
}

/** How the readers word a fault the declaration does not word itself. */
function wording(issue: z.core.$ZodRawIssue): string | undefined {
  const field = fieldOf(issue.path ?? []);
  switch (issue.code) {
    case 'invalid_value':
      return `${field} must be one of ${issue.values.map((v) => `"${String(v)}"`).join(', ')}; got ${JSON.stringify(issue.input)}`;
    case 'invalid_type':
      if (issue.expected === 'object') return `${field || 'the body'} must be a JSON object`;
      if (issue.expected === 'boolean') return `${field} must be true or false`;
      return `${field || 'the body'} must be a ${issue.expected}`;
    default:
      return `${field || 'the body'}: ${z.config().localeError?.(issue) ?? 'invalid input'}`;
  }
}

/**
 * The issue the readers would have stopped at: a body that is no object, then a key it does not
 * declare; then the first field in `order`, or without one a required field left out before the
 * first field in declaration order.
 */
function firstIssue(issues: readonly z.core.$ZodIssue[], order: readonly string[] | undefined): z.core.$ZodIssue {
  const rank = (issue: z.core.$ZodIssue): number => {
    if (issue.path.length === 0 && issue.code === 'invalid_type') return 0;
    if (issue.code === 'unrecognized_keys') return 1;
    if (order) return 2 + order.indexOf(issue.path.length === 0 ? '' : String(issue.path[0]));
    if (isRefusal(issue) && issue.params.code === 'MISSING_FIELD') return 2;
    return 3;
  };
  return [...issues].sort((a, b) => rank(a) - rank(b))[0]!;
}

function isRefusal(issue: z.core.$ZodIssue): issue is z.core.$ZodIssueCustom & { params: RefusalParams } {
  return issue.code === 'custom' && typeof issue.params?.refusal === 'function';
}

function refusal(issue: z.core.$ZodIssue): ValidationError {
  const field = fieldOf(issue.path);
  if (isRefusal(issue)) return issue.params.refusal(field);
  if (issue.code === 'unrecognized_keys') return new ValidationError('UNKNOWN_FIELD', join(field, issue.keys[0]!), issue.message);
  return new ValidationError('VALIDATION_FAILED', field || null, issue.message);
}
