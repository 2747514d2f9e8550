/** Nest's console logger without its start-up chatter (one line per module and route), which hides what matters. */
import { ConsoleLogger, type LogLevel } from '@nestjs/common';

const QUIET_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'NestApplication', 'GraphQLModule']);
const LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

export class KairosLogger extends ConsoleLogger {
  constructor(level: LogLevel) {
    super({ logLevels: LEVELS.slice(0, LEVELS.indexOf(level) + 1) });
  }

  override log(message: unknown, context?: string): void {
    if (context !== undefined && QUIET_CONTEXTS.has(context)) return;
    super.log(message, context);
  }
}
