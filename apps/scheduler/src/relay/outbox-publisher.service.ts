/**
 * Publishes the outbox (leader only): committed domain events, oldest id first, to the Redis stream
 * `<KAIROS_QUEUE_PREFIX>:events`, where any consumer can read them with XREAD or a consumer group.
 * One aggregate's events commit one after another, so they arrive in order; an id taken by a
 * transaction that commits later than a newer one is published after it. Unpublished rows are
 * found by `published_at`, never by a high-water id, so such an event is never skipped. An event
 * is marked published only after Redis took it, so delivery is at least once; consumers
 * deduplicate on the `id` field.
 * On the Postgres transport there is no stream: each event is a NOTIFY on the channel of the same
 * name, sent in the transaction that marks it published, so sessions LISTENing at that moment get it
 * (a NOTIFY is not kept for later listeners).
 */
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { OutboxRepository, inTransaction, type Db, type OutboxRow } from '@kairos/ledger';
import type { Transport } from '@kairos/queue';
import { DATABASE, KAIROS_CONFIG, TRANSPORT } from '@kairos/process';
import { LeadershipService } from '../leadership/leadership.service.js';
import { formatInstant } from '@kairos/domain';

const PUBLISH_BATCH = 500;
/** The stream keeps about this many events; older ones are trimmed as new ones arrive. */
const STREAM_LENGTH = '100000';
/** A NOTIFY payload must stay under 8,000 bytes; a larger event goes out without its payload. */
const NOTIFY_LIMIT = 7_900;

export function eventStreamKey(queuePrefix: string): string {
  return `${queuePrefix}:events`;
}

@Injectable()
export class OutboxPublisher implements OnModuleInit {

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    @Inject(TRANSPORT) private readonly transport: Transport,
    private readonly leadership: LeadershipService,
    private readonly outbox: OutboxRepository,
  ) {}

  onModuleInit(): void {
    this.leadership.whileLeading('OutboxPublisher', this.config.scheduler.relayIntervalMs, () => this.publish());
  }

  private async publish(): Promise<number> {
    const interval = this.config.scheduler.relayIntervalMs;
    const events = await this.outbox.listUnpublished(this.db, PUBLISH_BATCH);
    if (events.length === 0) return interval;
    const key = eventStreamKey(this.config.queuePrefix);
    const redis = this.transport.redis;
    if (!redis) {
      await inTransaction(this.db, async (tx) => {
        for (const e of events) await tx.query('SELECT pg_notify($1, $2)', [key, notification(e)]);
        await this.outbox.markPublished(tx, events.map((e) => e.id));
      });
      return events.length === PUBLISH_BATCH ? 0 : interval;
    }
    const pipeline = redis.pipeline();
    for (const e of events) {
      pipeline.xadd(
        key, 'MAXLEN', '~', STREAM_LENGTH, '*',
        'id', String(e.id), 'topic', e.topic, 'namespaceId', e.namespaceId, 'aggregateId', e.aggregateId,
        'createdAt', formatInstant(e.createdAt), 'payload', JSON.stringify(e.payload),
      );
    }
    const results = (await pipeline.exec()) ?? [];
    const failed = results.find(([error]) => error !== null);
    if (failed) throw failed[0]!;
    await this.outbox.markPublished(this.db, events.map((e) => e.id));
    return events.length === PUBLISH_BATCH ? 0 : interval;
  }
}

/** The event as one JSON text, the stream's fields; without `payload` (and with `payloadOmitted`) when it would not fit a NOTIFY. */
function notification(e: OutboxRow): string {
  const fields = { id: String(e.id), topic: e.topic, namespaceId: e.namespaceId, aggregateId: e.aggregateId, createdAt: formatInstant(e.createdAt) };
  const full = JSON.stringify({ ...fields, payload: JSON.stringify(e.payload) });
  return Buffer.byteLength(full) <= NOTIFY_LIMIT ? full : JSON.stringify({ ...fields, payloadOmitted: true });
}
