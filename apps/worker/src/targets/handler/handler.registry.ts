/**
 * The typed handler registry. At start-up it discovers every provider marked @Handles(name) and
 * refuses to start when a name is claimed twice or a catalogue name has no implementation, so a
 * worker never accepts runs it cannot execute.
 */
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { HANDLER_NAMES, isHandlerName, type HandlerName } from '@kairos/domain';
import { RUN_HANDLER_NAME, type RunHandler } from './run-handler.js';

export class HandlerRegistryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HandlerRegistryError';
  }
}

@Injectable()
export class HandlerRegistry implements OnModuleInit {
  private readonly handlers = new Map<HandlerName, RunHandler<HandlerName>>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      if (!wrapper.metatype || !wrapper.instance) continue;
      const name = this.reflector.get<string | undefined>(RUN_HANDLER_NAME, wrapper.metatype);
      if (name === undefined) continue;
      this.register(name, wrapper.instance as RunHandler<HandlerName>);
    }
    const missing = HANDLER_NAMES.filter((n) => !this.handlers.has(n));
    if (missing.length > 0) throw new HandlerRegistryError(`no handler registered for ${missing.join(', ')}`);
  }

  register(name: string, handler: RunHandler<HandlerName>): void {
    if (!isHandlerName(name)) throw new HandlerRegistryError(`handler "${name}" is not in the handler catalogue`);
    if (this.handlers.has(name)) throw new HandlerRegistryError(`handler "${name}" is registered twice`);
    this.handlers.set(name, handler);
  }

  get<N extends HandlerName>(name: N): RunHandler<N> | undefined {
    return this.handlers.get(name) as RunHandler<N> | undefined;
  }
}
