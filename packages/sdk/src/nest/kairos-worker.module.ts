/**
 * KairosWorker for NestJS applications, in the way @nestjs/bullmq's @Processor works: import
 * KairosWorkerModule.forRoot({...}) and mark provider methods with @KairosHandler('name'). The
 * worker starts once the application is up, with every marked method registered as a handler, and
 * stops (within its grace) when the application shuts down.
 */
import { Inject, Injectable, Module, SetMetadata, type BeforeApplicationShutdown, type DynamicModule, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import type { KairosHandlerFunction } from '../worker/handler.js';
import { KairosWorker, KairosWorkerError, type KairosWorkerOptions } from '../worker/kairos-worker.js';

const KAIROS_HANDLER = 'kairos:handler';
const KAIROS_WORKER_OPTIONS = Symbol('KAIROS_WORKER_OPTIONS');

/** The worker's options; `handlers` is optional here, since decorated methods supply them. */
export type KairosWorkerModuleOptions = Omit<KairosWorkerOptions, 'handlers'> & { handlers?: KairosWorkerOptions['handlers'] };

/** Registers the decorated method as the handler `name` of the module's worker. */
export const KairosHandler = (name: string): MethodDecorator => SetMetadata(KAIROS_HANDLER, name);

/** The running worker of a KairosWorkerModule; inject it to read its id or queue. */
@Injectable()
export class KairosWorkerHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private started: KairosWorker | null = null;

  constructor(
    @Inject(KAIROS_WORKER_OPTIONS) private readonly options: KairosWorkerModuleOptions,
    @Inject(DiscoveryService) private readonly discovery: DiscoveryService,
    @Inject(MetadataScanner) private readonly scanner: MetadataScanner,
    @Inject(Reflector) private readonly reflector: Reflector,
  ) {}

  get worker(): KairosWorker {
    if (!this.started) throw new KairosWorkerError('the Kairos worker starts with the application (after app.init())');
    return this.started;
  }

  async onApplicationBootstrap(): Promise<void> {
    const worker = new KairosWorker({ ...this.options, handlers: { ...this.options.handlers, ...this.discoverHandlers() } });
    await worker.start();
    this.started = worker;
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.started?.stop();
  }

  /** Every provider method marked @KairosHandler, bound to its instance; a name claimed twice refuses to start. */
  private discoverHandlers(): Record<string, KairosHandlerFunction> {
    const found: Record<string, KairosHandlerFunction> = {};
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      for (const method of this.scanner.getAllMethodNames(Object.getPrototypeOf(instance))) {
        const fn = instance[method] as KairosHandlerFunction;
        const name = this.reflector.get<string | undefined>(KAIROS_HANDLER, fn);
        if (name === undefined) continue;
        if (found[name] || this.options.handlers?.[name]) throw new KairosWorkerError(`handler "${name}" is registered twice`);
        found[name] = fn.bind(instance);
      }
    }
    return found;
  }
}

@Module({})
export class KairosWorkerModule {
  static forRoot(options: KairosWorkerModuleOptions): DynamicModule {
    return {
      module: KairosWorkerModule,
      imports: [DiscoveryModule],
      providers: [{ provide: KAIROS_WORKER_OPTIONS, useValue: options }, KairosWorkerHost],
      exports: [KairosWorkerHost],
    };
  }
}
