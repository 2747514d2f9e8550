/**
 * The pieces every variable is declared with: a Variable (one environment variable, its default
 * and meaning as the documentation shows them, and its reader), a Derived value read from several,
 * and the readers of each kind of value (flags, URLs, durations, lists, ...).
 */
import { DurationError, parseDuration } from '@kairos/domain';

export type Role = 'api' | 'scheduler' | 'worker';
export const ROLES: readonly Role[] = ['api', 'scheduler', 'worker'];

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export type Env = Record<string, string | undefined>;

/** What a variable is read against: the environment, and the roles of the entry point for when KAIROS_ROLES is unset. */
export interface Context {
  env: Env;
  defaultRoles: readonly Role[];
}

/** One environment variable: its name, its default and meaning as the documentation shows them (markdown), and its reader. */
export class Variable<T> {
  constructor(
    readonly name: string,
    readonly shownDefault: string,
    readonly meaning: string,
    readonly read: (context: Context) => T,
  ) {}

  /** The same variable, its value passed through `f`. */
  map<U>(f: (value: T) => U): Variable<U> {
    return new Variable(this.name, this.shownDefault, this.meaning, (context) => f(this.read(context)));
  }
}

/**
 * A value read from several variables (or from one, in the light of others): it shows in the table
 * as the rows of `variables`, which must each be declared nowhere else.
 */
export class Derived<T> {
  constructor(
    readonly variables: readonly Variable<unknown>[],
    readonly read: (context: Context) => T,
  ) {}
}

/** What a declaration reads into: each Variable<T> becomes its T. */
export type Read<D> = D extends Variable<infer T> ? T : D extends Derived<infer T> ? T : { [K in keyof D]: Read<D[K]> };

/** Reads a declaration (a Variable, a Derived, or an object of them, nested) against `context`, into its shape. */
export function readDeclaration(declaration: object, context: Context): unknown {
  return declaration instanceof Variable || declaration instanceof Derived
    ? declaration.read(context)
    : Object.fromEntries(Object.entries(declaration).map(([key, entry]: [string, object]) => [key, readDeclaration(entry, context)]));
}

/** A default, either fixed or taken from the rest of the environment; the latter needs `shown` to say how. */
export type Fallback<T> = T | ((context: Context) => T);

export interface Spec<D> {
  name: string;
  default: D;
  meaning: string;
  /** The table's default column, when the default is not one value. */
  shown?: string;
}

export function variable<D, T>(spec: Spec<Fallback<D>>, read: (value: string | undefined, fallback: () => D) => T): Variable<T> {
  const fallback = (context: Context) => (): D =>
    typeof spec.default === 'function' ? (spec.default as (context: Context) => D)(context) : spec.default;
  const shown = spec.shown ?? `\`${String(spec.default)}\``;
  return new Variable(spec.name, shown, spec.meaning, (context) => read(raw(context.env, spec.name), fallback(context)));
}

export function raw(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

export function flag(spec: Spec<Fallback<boolean>>): Variable<boolean> {
  return variable(spec, (value, fallback) => {
    if (value === undefined) return fallback();
    if (value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
    throw new ConfigError(`${spec.name}="${value}" must be true or false`);
  });
}

export function url(spec: Spec<string> & { protocols: string[] }): Variable<string> {
  return variable(spec, (value = spec.default) => {
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      throw new ConfigError(`${spec.name} is not a valid URL`);
    }
    if (!spec.protocols.includes(parsed.protocol)) {
      throw new ConfigError(`${spec.name} must start with ${spec.protocols.map((p) => `${p}//`).join(' or ')}`);
    }
    return value;
  });
}

export function text(spec: Spec<string> & { pattern: RegExp }): Variable<string> {
  return variable(spec, (value = spec.default) => {
    if (!spec.pattern.test(value)) throw new ConfigError(`${spec.name}="${value}" is not valid (expected ${spec.pattern.source})`);
    return value;
  });
}

/** Any text, or null when unset. */
export function optionalText(spec: Spec<null> & { shown: string }): Variable<string | null> {
  return variable(spec, (value) => value ?? null);
}

/** Any text, or `default` when unset. */
export function anyText(spec: Spec<string>): Variable<string> {
  return variable(spec, (value = spec.default) => value);
}

/** A URL, or null when unset. */
export function optionalUrl(spec: Spec<null> & { shown: string; protocols: string[] }): Variable<string | null> {
  const checked = url({ ...spec, default: '' });
  return new Variable(spec.name, spec.shown, spec.meaning, (context) => (raw(context.env, spec.name) === undefined ? null : checked.read(context)));
}

export function oneOf<T extends string>(spec: Spec<Fallback<T>> & { allowed: readonly T[] }): Variable<T> {
  return variable(spec, (value, fallback) => {
    const chosen = value ?? fallback();
    if (!(spec.allowed as readonly string[]).includes(chosen)) {
      throw new ConfigError(`${spec.name}="${chosen}" is not one of ${spec.allowed.join(', ')}`);
    }
    return chosen as T;
  });
}

export function integer(spec: Spec<number> & { min: number; max: number }): Variable<number> {
  return variable(spec, (value) => {
    if (value === undefined) return spec.default;
    const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isInteger(n) || n < spec.min || n > spec.max) {
      throw new ConfigError(`${spec.name}="${value}" must be an integer from ${spec.min} to ${spec.max}`);
    }
    return n;
  });
}

/** An integer from `min` to `max`, or null when unset. */
export function optionalInteger(spec: Spec<null> & { shown: string; min: number; max: number }): Variable<number | null> {
  const checked = integer({ ...spec, default: spec.min });
  return new Variable(spec.name, spec.shown, spec.meaning, (context) => (raw(context.env, spec.name) === undefined ? null : checked.read(context)));
}

/** Leases shorter than a second would expire between renewals on a busy machine. */
export const SECOND = 1_000;
/** Loops polling faster than this would only burn the database. */
export const LOOP_MIN = 10;

/** A duration (`90s`, `1h30m`, or bare milliseconds) read as milliseconds, at least `min` and at most `max`. */
export function duration(spec: Spec<string> & { min?: number; max?: number }): Variable<number> {
  const minMs = spec.min ?? 0;
  return variable(spec, (value = spec.default) => {
    let ms: number;
    try {
      ms = parseDuration(/^\d+$/.test(value) ? Number(value) : value);
    } catch (error) {
      if (error instanceof DurationError) throw new ConfigError(`${spec.name}="${value}": ${error.message}`);
      throw error;
    }
    if (ms < minMs) throw new ConfigError(`${spec.name}="${value}" must be at least ${minMs} ms`);
    if (spec.max !== undefined && ms > spec.max) throw new ConfigError(`${spec.name}="${value}" must be at most ${spec.max} ms`);
    return ms;
  });
}

/** A comma-separated list; blanks between commas are dropped. */
export function list(spec: Omit<Spec<never>, 'default'>): Variable<string[]> {
  return variable({ ...spec, default: [], shown: 'empty' }, (value) =>
    (value ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  );
}
