/**
 * KairosWorkerModule in a small NestJS application: provider methods marked @KairosHandler become
 * the handlers of a worker on the module's queue, which starts with the application, runs the
 * queue's runs with the provider's own dependencies, and stops with it.
 */
import { Inject, Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KairosHandler, KairosWorkerHost, KairosWorkerModule, NonRetryableError, type HandlerContext } from '@kairos/sdk';
import { runInState, useKairos } from '../support/kairos.js';

const GREETING = Symbol('GREETING');

@Injectable()
class Greeter {
  constructor(@Inject(GREETING) private readonly greeting: string) {}

  @KairosHandler('greet')
  async greet({ payload, attempt }: HandlerContext<{ name: string }>) {
    return { text: `${this.greeting}, ${payload.name}`, attempt };
  }

  @KairosHandler('refuse')
  async refuse(): Promise<never> {
    throw new NonRetryableError('no greeting for you');
  }

  /** Not a handler: left alone. */
  helper(): string {
    return this.greeting;
  }
}

describe('KairosWorkerModule in a NestJS application', () => {
  let app: INestApplicationContext;

  const { t, client } = useKairos({ roles: ['api', 'scheduler'] });

  beforeAll(async () => {
    const env = t.env();
    @Module({
      imports: [
        KairosWorkerModule.forRoot({
          databaseUrl: env.DATABASE_URL,
          redisUrl: env.REDIS_URL,
          queuePrefix: env.KAIROS_QUEUE_PREFIX,
          queue: 'greetings',
          version: 'nest-1',
          concurrency: 2,
        }),
      ],
      providers: [Greeter, { provide: GREETING, useValue: 'Hello' }],
    })
    class GreetingApp {}
    app = await NestFactory.createApplicationContext(GreetingApp, { logger: false });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
  });

  const settled = (id: string) => runInState(client, id, ['succeeded', 'dead']);

  it('registers the decorated methods on its queue and runs them with their provider', async () => {
    const host = app.get(KairosWorkerHost);
    expect(host.worker.queue).toBe('greetings');
    const workers = (await client.get('/v1/workers')).body.items;
    expect(workers).toContainEqual(expect.objectContaining({ id: host.worker.id, queue: 'greetings', handlers: ['greet', 'refuse'], version: 'nest-1' }));

    const run = (await client.post('/v1/runs', { target: { type: 'handler', name: 'greet', queue: 'greetings' }, payload: { name: 'Ada' } })).body;
    expect(await settled(run.id)).toMatchObject({ state: 'succeeded', result: { text: 'Hello, Ada', attempt: 1 } });
    const refused = (await client.post('/v1/runs', { target: { type: 'handler', name: 'refuse', queue: 'greetings' }, retry: { maxAttempts: 3 } })).body;
    expect(await settled(refused.id)).toMatchObject({ state: 'dead', attempt: 1, reasonCode: 'HANDLER_NON_RETRYABLE' });
  });
});
