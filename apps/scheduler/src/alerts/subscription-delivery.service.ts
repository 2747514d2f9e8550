/**
 * Subscription deliveries (leader only). Fan-out: each outbox event, once, in one transaction with
 * the deliveries it makes, is matched against the namespace's active subscriptions (a `ping` goes
 * to its one subscription) and given the body every delivery of it carries. Delivery: each
 * subscription with deliveries due has a chain of its own, sending them oldest first, so one slow
 * or dead endpoint only ever delays its own deliveries. A failed attempt is retried with backoff;
 * a subscription failing for the whole retry window is disabled, and `subscription.disabled` goes
 * to the namespace's other subscriptions. A crash anywhere delivers again (at least once); the
 * Idempotency-Key, the event id, lets receivers deduplicate.
 */
import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { KairosConfig } from '@kairos/config';
import { AddressPolicy, deliveryBackoffMs, deliveryBody, formatInstant, slackMessage, subscriptionMatches, type DeliveryBody, type DomainEventTopic } from '@kairos/domain';
import {
  inTransaction,
  OutboxRepository,
  SubscriptionRepository,
  type DatabaseClock,
  type Db,
  type DeliveryAttemptRow,
  type DueDelivery,
  type NewDelivery,
  type UnfannedEvent,
} from '@kairos/ledger';
import { DATABASE, DATABASE_CLOCK, KAIROS_CONFIG, KairosMetrics, RefusedAddressError, SigningSecrets, WebhookTimeoutError, sendWebhook, signatureHeader } from '@kairos/process';
import { LeadershipService, type LeadershipTerm } from '../leadership/leadership.service.js';

const FAN_OUT_BATCH = 500;
/** How often the dispatcher looks for due deliveries when nothing woke it. */
const DISPATCH_IDLE_MS = 250;
/** Subscriptions delivered to at once; each has one request in flight at a time. */
const MAX_CHAINS = 64;

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);

@Injectable()
export class SubscriptionDeliveryService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('Subscriptions');
  private readonly repository = new SubscriptionRepository();
  private readonly outbox = new OutboxRepository();
  private readonly policy: AddressPolicy;
  private readonly secrets: SigningSecrets;
  private readonly chains = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();
  private dispatcher: { wake(): void } | null = null;

  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(KAIROS_CONFIG) private readonly config: KairosConfig,
    @Inject(DATABASE_CLOCK) private readonly clock: DatabaseClock,
    private readonly leadership: LeadershipService,
    private readonly metrics: KairosMetrics,
  ) {
    this.policy = new AddressPolicy(config.worker.httpAllowList);
    this.secrets = new SigningSecrets(db);
  }

  onModuleInit(): void {
    this.leadership.whileLeading('SubscriptionFanOut', this.config.scheduler.relayIntervalMs, () => this.fanOut());
    this.dispatcher = this.leadership.whileLeading('SubscriptionDelivery', DISPATCH_IDLE_MS, (term) => this.dispatch(term));
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping.abort(new Error('shutting down'));
    await Promise.allSettled(this.chains.values());
  }

  /** One batch of events fanned out; the pause before the next. */
  private async fanOut(): Promise<number> {
    const { events, deliveries } = await inTransaction(this.db, async (tx) => {
      const events = await this.repository.lockUnfanned(tx, FAN_OUT_BATCH);
      if (events.length === 0) return { events: 0, deliveries: 0 };
      const namespaceIds = [...new Set(events.map((e) => e.namespaceId))];
      const pinged = events.filter((e) => e.topic === 'ping').flatMap((e) => str(e.payload.subscriptionId) ?? []);
      const subscriptions = await this.repository.listening(tx, namespaceIds, pinged);
      const subjects = await this.repository.subjects(
        tx,
        events.flatMap((e) => str(e.payload.scheduleId) ?? []),
        events.flatMap((e) => str(e.payload.sensorId) ?? []),
      );
      const names = await this.repository.namespaceNames(tx, namespaceIds);
      const written: NewDelivery[] = [];
      for (const event of events) {
        const scheduleId = str(event.payload.scheduleId);
        const sensorId = str(event.payload.sensorId);
        const subject = (scheduleId && subjects.get(scheduleId)) || (sensorId && subjects.get(sensorId)) || null;
        const topic = event.topic as DomainEventTopic;
        const to =
          topic === 'ping'
            ? subscriptions.filter((s) => s.id === event.payload.subscriptionId && s.namespaceId === event.namespaceId)
            : subscriptions.filter((s) => s.namespaceId === event.namespaceId && s.state === 'active' && subscriptionMatches(s, { topic, scheduleId, subject }));
        if (to.length === 0) continue;
        const body = this.bodyOf(event, names.get(event.namespaceId) ?? event.namespaceId, subject);
        for (const subscription of to) written.push({ subscriptionId: subscription.id, eventId: event.id, eventType: topic, body: body as unknown as Record<string, unknown> });
      }
      await this.repository.writeFanOut(tx, events.map((e) => e.id), written);
      return { events: events.length, deliveries: written.length };
    });
    if (deliveries > 0) this.dispatcher?.wake();
    return events === FAN_OUT_BATCH ? 0 : this.config.scheduler.relayIntervalMs;
  }

  private bodyOf(event: UnfannedEvent, namespace: string, subject: Parameters<typeof deliveryBody>[2]): DeliveryBody {
    return deliveryBody({ id: event.id, topic: event.topic as DomainEventTopic, createdAt: formatInstant(event.createdAt), payload: event.payload }, namespace, subject, this.config.alerts.publicUrl);
  }

  /** Starts a chain for each subscription with deliveries due that has none running. */
  private async dispatch(term: LeadershipTerm): Promise<number> {
    const free = MAX_CHAINS - this.chains.size;
    if (free <= 0) return DISPATCH_IDLE_MS;
    for (const subscriptionId of await this.repository.dueSubscriptions(this.db, free, [...this.chains.keys()])) {
      const chain = this.drain(subscriptionId, term)
        .catch((error: Error) => this.logger.warn(`subscription ${subscriptionId}: delivery interrupted (${error.message}); it is tried again`))
        .finally(() => this.chains.delete(subscriptionId));
      this.chains.set(subscriptionId, chain);
    }
    return DISPATCH_IDLE_MS;
  }

  /** Sends the subscription's due deliveries one after another, while this process leads the term it started in. */
  private async drain(subscriptionId: string, term: LeadershipTerm): Promise<void> {
    while (!this.stopping.signal.aborted && this.leadership.term()?.epoch === term.epoch) {
      const delivery = await this.repository.nextDue(this.db, subscriptionId);
      if (delivery === null) return;
      await this.deliver(delivery);
    }
  }

  private async deliver(delivery: DueDelivery): Promise<void> {
    const body = delivery.body as unknown as DeliveryBody;
    const text = JSON.stringify(delivery.format === 'slack' ? slackMessage(body) : body);
    const attemptedAt = new Date(this.clock.now());
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'kairos',
      'idempotency-key': delivery.eventId,
      'kairos-event-type': delivery.eventType,
      'kairos-delivery-id': delivery.id,
      'kairos-signature': signatureHeader(await this.secrets.of(delivery.namespaceId), text, Math.floor(attemptedAt.getTime() / 1000)),
    };
    const started = performance.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const response = await sendWebhook(new URL(delivery.url), this.policy, {
        method: 'POST',
        headers,
        body: text,
        timeoutMs: this.config.alerts.deliveryTimeoutMs,
        signal: this.stopping.signal,
      });
      statusCode = response.status;
      if (statusCode < 200 || statusCode >= 300) error = `answered ${statusCode}`;
    } catch (failure) {
      if (this.stopping.signal.aborted) throw failure;
      error =
        failure instanceof RefusedAddressError
          ? `refused: ${failure.message}`
          : failure instanceof WebhookTimeoutError
            ? failure.message
            : `could not connect: ${(failure as Error).message}`;
    }
    const attempt: DeliveryAttemptRow = { attempt: delivery.attempts + 1, attemptedAt, statusCode, latencyMs: Math.round(performance.now() - started), error };
    this.metrics.deliveryAttempt(error === null ? 'delivered' : 'failed');
    if (error === null) {
      await inTransaction(this.db, (tx) => this.repository.recordDelivered(tx, delivery, attempt));
      return;
    }
    await this.recordFailure(delivery, attempt);
  }

  /** Schedules the next attempt, or disables the subscription once it has failed for the whole retry window. */
  private async recordFailure(delivery: DueDelivery, attempt: DeliveryAttemptRow): Promise<void> {
    const failingSince = delivery.failingSince ?? attempt.attemptedAt;
    const windowMs = this.config.alerts.retryWindowMs;
    // ±10% jitter, so the deliveries of one outage do not come back in step.
    const delayMs = deliveryBackoffMs(attempt.attempt) * (0.9 + Math.random() * 0.2);
    const retryAt = new Date(attempt.attemptedAt.getTime() + delayMs);
    await inTransaction(this.db, async (tx) => {
      await this.repository.recordFailed(tx, delivery, attempt, retryAt);
      if (attempt.attemptedAt.getTime() - failingSince.getTime() < windowMs) return;
      const host = new URL(delivery.url).host;
      const reason = `deliveries to ${host} failed for ${Math.round(windowMs / 1000)} s (last: ${attempt.error})`;
      if (!(await this.repository.disable(tx, delivery.subscriptionId, reason))) return;
      // The URL may hold a secret (a Slack webhook's does): only its host goes to the others.
      await this.outbox.append(tx, [
        { namespaceId: delivery.namespaceId, topic: 'subscription.disabled', aggregateId: delivery.subscriptionId, payload: { subscriptionId: delivery.subscriptionId, host, reason } },
      ]);
      this.logger.warn(`subscription ${delivery.subscriptionId} disabled: ${reason}`);
    });
  }
}
