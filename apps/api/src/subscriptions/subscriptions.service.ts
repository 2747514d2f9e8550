/**
 * Subscription use cases: declare, change, pause, resume and delete subscriptions, list their
 * deliveries, and send a test event. Each validates its input completely before touching the
 * ledger and writes in one transaction, under the subscription's row lock. Delivering is the
 * scheduler's: it fans each outbox event out to the subscriptions it matches.
 */
import { Inject, Injectable } from '@nestjs/common';
import { AddressPolicy, ConflictError, newId, NotFoundError, ValidationError } from '@kairos/domain';
import { readSubscriptionCreate, readSubscriptionPatch, type SubscriptionSpec } from '@kairos/domain/wire';
import { inTransaction, OutboxRepository, SubscriptionRepository, type DatabaseClock, type Db, type Page, type SubscriptionRow, type Tx } from '@kairos/ledger';
import { DATABASE, DATABASE_CLOCK } from '@kairos/process';
import type { CallerContext } from '../auth/request-context.js';
import { deliveryView, subscriptionView, type SubscriptionDeliveryView, type SubscriptionView } from './subscription.view.js';

@Injectable()
export class SubscriptionsService {
  constructor(
    @Inject(DATABASE) private readonly db: Db,
    @Inject(DATABASE_CLOCK) private readonly clock: DatabaseClock,
    private readonly subscriptions: SubscriptionRepository,
    private readonly outbox: OutboxRepository,
    private readonly addresses: AddressPolicy,
  ) {}

  /** POST /v1/subscriptions: 201 with the subscription, active unless created paused. */
  async create(caller: CallerContext, body: unknown): Promise<SubscriptionView> {
    const { spec, paused } = readSubscriptionCreate(body);
    this.admit(spec);
    const row = await inTransaction(this.db, (tx) => this.subscriptions.create(tx, newId(this.clock.now()), caller.namespaceId, spec, paused));
    return subscriptionView(row);
  }

  async get(caller: CallerContext, id: string): Promise<SubscriptionView> {
    return subscriptionView(await this.require(this.db, caller, id));
  }

  async list(caller: CallerContext, limit: number, cursor?: string): Promise<Page<SubscriptionView>> {
    const page = await this.subscriptions.list(this.db, caller.namespaceId, limit, cursor);
    return { items: page.items.map(subscriptionView), nextCursor: page.nextCursor };
  }

  /** PATCH: the given fields replace the stored ones (a filter as a whole); `paused` pauses or resumes. */
  async patch(caller: CallerContext, id: string, body: unknown): Promise<SubscriptionView> {
    const { fields, paused } = readSubscriptionPatch(body);
    const row = await inTransaction(this.db, async (tx) => {
      let current = await this.require(tx, caller, id, true);
      if (Object.keys(fields).length > 0) {
        const { filter, ...rest } = fields;
        const spec: SubscriptionSpec = { ...specOf(current), ...rest, ...(filter ?? {}) };
        this.admit(spec);
        current = await this.subscriptions.replaceDefinition(tx, id, spec);
      }
      if (paused !== null) current = (await this.subscriptions.setPaused(tx, id, paused)) ?? current;
      return current;
    });
    return subscriptionView(row);
  }

  /** Pause, or resume (a disabled subscription too: its failures are forgotten). Pausing a paused one changes nothing. */
  async setPaused(caller: CallerContext, id: string, paused: boolean): Promise<SubscriptionView> {
    const row = await inTransaction(this.db, async (tx) => {
      const current = await this.require(tx, caller, id, true);
      return (await this.subscriptions.setPaused(tx, id, paused)) ?? current;
    });
    return subscriptionView(row);
  }

  /** DELETE: the subscription, its deliveries and their attempts. */
  async remove(caller: CallerContext, id: string): Promise<void> {
    await inTransaction(this.db, async (tx) => {
      await this.require(tx, caller, id, true);
      await this.subscriptions.delete(tx, id);
    });
  }

  async deliveries(caller: CallerContext, id: string, limit: number, cursor?: string): Promise<Page<SubscriptionDeliveryView>> {
    await this.require(this.db, caller, id);
    const page = await this.subscriptions.listDeliveries(this.db, id, limit, cursor);
    return { items: page.items.map(deliveryView), nextCursor: page.nextCursor };
  }

  /**
   * POST /v1/subscriptions/:id/test: writes a `ping` event for this subscription alone, delivered
   * like any event (signed, retried); 409 unless the subscription is active.
   */
  async test(caller: CallerContext, id: string): Promise<{ eventId: string }> {
    const eventId = await inTransaction(this.db, async (tx) => {
      const row = await this.require(tx, caller, id, true);
      if (row.state !== 'active') {
        throw new ConflictError('INVALID_STATE', null, `subscription ${id} is ${row.state}; resume it (POST /v1/subscriptions/${id}/resume) before testing it`);
      }
      const [written] = await this.outbox.appendReturningIds(tx, [
        { namespaceId: caller.namespaceId, topic: 'ping', aggregateId: id, payload: { subscriptionId: id, message: 'A test delivery from Kairos.' } },
      ]);
      return written!;
    });
    return { eventId };
  }

  /** Refuses a URL naming a forbidden address literally (the delivery checks the address it dials as well). */
  private admit(spec: SubscriptionSpec): void {
    const refusal = this.addresses.urlRefusal(spec.url);
    if (refusal) throw new ValidationError('VALIDATION_FAILED', 'url', `url: ${refusal}`);
  }

  private async require(db: Db | Tx, caller: CallerContext, id: string, lock = false): Promise<SubscriptionRow> {
    const row = await this.subscriptions.get(db, caller.namespaceId, id, lock);
    if (!row) throw new NotFoundError('subscription', id);
    return row;
  }
}

function specOf(row: SubscriptionRow): SubscriptionSpec {
  return { url: row.url, events: row.events, scheduleIds: row.scheduleIds, labels: row.labels, format: row.format, description: row.description };
}
