/**
 * Kairos's logger behind Nest's LoggerService. LOG_FORMAT=json (the default when stdout is not a
 * terminal) writes every line as one pino JSON object: level, time, msg, the process role, the
 * Nest context, and the fields of the current log context (runId, scheduleId, namespace, epoch,
 * requestId). LOG_FORMAT=pretty (or text) keeps Nest's coloured console lines for terminals. Either
 * way Nest's start-up chatter (one line per module and route) is dropped, since it hides what matters.
 */
import { ConsoleLogger, type LoggerService, type LogLevel } from '@nestjs/common';
import { pino, type DestinationStream, type Logger as Pino, type LoggerOptions } from 'pino';
import type { KairosConfig } from '@kairos/config';
import { currentLogContext, type LogFields } from './log-context.js';

const QUIET_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'NestApplication', 'GraphQLModule']);
const LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];
const PINO_LEVELS = { fatal: 'fatal', error: 'error', warn: 'warn', log: 'info', debug: 'debug', verbose: 'trace' } as const;

/** A structured message: what happened in `msg`, the identifiers it concerns beside it. */
export interface LogRecord extends LogFields, Record<string, unknown> {
  msg: string;
}

/** Whether this process logs JSON lines: asked for, or `auto` with stdout not a terminal. */
export function logsJson(config: Pick<KairosConfig, 'logFormat'>): boolean {
  return config.logFormat === 'json' || (config.logFormat === 'auto' && !process.stdout.isTTY);
}

export function createLogger(config: Pick<KairosConfig, 'logLevel' | 'logFormat' | 'roles'>): LoggerService {
  return logsJson(config) ? new JsonLogger(config.logLevel, config.roles.join(',')) : new KairosConsoleLogger(config.logLevel);
}

/** Nest calls `(message, context)`, `(message, stack, context)` or `(message, ...params, context)`. */
function split(params: unknown[]): { context?: string; stack?: string } {
  const context = typeof params.at(-1) === 'string' ? (params.at(-1) as string) : undefined;
  const rest = context === undefined ? params : params.slice(0, -1);
  const stack = typeof rest[0] === 'string' ? rest[0] : rest[0] instanceof Error ? rest[0].stack : undefined;
  return { context, stack };
}

export class JsonLogger implements LoggerService {
  private readonly pino: Pino;

  /** `destination` is stdout unless a test passes a stream to read the lines back from. */
  constructor(level: KairosConfig['logLevel'], role: string, destination?: DestinationStream) {
    const options: LoggerOptions = {
      level: PINO_LEVELS[level],
      base: { role, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // A last guard: whatever a call site passes, these never reach the log.
      redact: { paths: ['payload', 'result', 'secret', 'signingSecret', 'authorization', 'headers', '*.payload', '*.result', '*.secret'], remove: true },
    };
    this.pino = destination ? pino(options, destination) : pino(options);
  }

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', message: unknown, params: unknown[]): void {
    const { context, stack } = split(params);
    if (context !== undefined && QUIET_CONTEXTS.has(context)) return;
    if (!this.pino.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = { ...currentLogContext(), ...(context !== undefined && { context }) };
    if (stack !== undefined && level !== 'info') fields.stack = stack;
    if (message instanceof Error) {
      this.pino[level]({ ...fields, stack: message.stack }, message.message);
    } else if (typeof message === 'object' && message !== null && 'msg' in message) {
      const { msg, ...rest } = message as LogRecord;
      this.pino[level]({ ...fields, ...rest }, msg);
    } else {
      this.pino[level](fields, typeof message === 'string' ? message : JSON.stringify(message));
    }
  }
}

/** Nest's console logger for terminals; a structured message prints its `msg`. */
export class KairosConsoleLogger extends ConsoleLogger {
  constructor(level: LogLevel) {
    super({ logLevels: LEVELS.slice(0, LEVELS.indexOf(level) + 1) });
  }

  override log(message: unknown, ...params: unknown[]): void {
    const { context } = split(params);
    if (context !== undefined && QUIET_CONTEXTS.has(context)) return;
    super.log(readable(message), ...params);
  }

  override warn(message: unknown, ...params: unknown[]): void {
    super.warn(readable(message), ...params);
  }

  override error(message: unknown, ...params: unknown[]): void {
    super.error(readable(message), ...params);
  }
}

/** A structured message's `msg` already says what the line is about; its fields are for machines. */
function readable(message: unknown): unknown {
  return typeof message === 'object' && message !== null && 'msg' in message ? (message as LogRecord).msg : message;
}
