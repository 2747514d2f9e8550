/**
 * Subscriptions' pure rules: which events a subscription's filter lets through, the body a
 * delivery carries (and its Slack wording), and how long a failed delivery waits before the next
 * attempt.
 */
import type { DomainEventTopic, SubscriptionEvent } from './closed-sets.js';

/** A subscription's filter, as stored: no schedule ids and no labels let everything through. */
export interface SubscriptionFilter {
  events: readonly SubscriptionEvent[];
  scheduleIds: readonly string[];
  labels: Readonly<Record<string, string>>;
}

/** What an event is about: the schedule or sensor whose name and labels it carries, when it has one. */
export interface EventSubjectInfo {
  kind: 'schedule' | 'sensor';
  id: string;
  name: string;
  labels: Readonly<Record<string, string>>;
}

/** An event as the filter reads it. */
export interface FilteredEvent {
  topic: DomainEventTopic;
  /** The schedule the event is of (a schedule's own event, or a run of it). */
  scheduleId: string | null;
  subject: EventSubjectInfo | null;
}

/**
 * True when `filter` lets `event` through: its type is listed, its schedule is one of the listed
 * ones (when any are), and its subject carries every listed label (when any are). An event
 * without a schedule never passes a schedule filter; one without a subject never passes a label
 * filter. A `ping` is addressed to one subscription and never filtered here.
 */
export function subscriptionMatches(filter: SubscriptionFilter, event: FilteredEvent): boolean {
  if (event.topic === 'ping' || !filter.events.includes(event.topic)) return false;
  if (filter.scheduleIds.length > 0 && (event.scheduleId === null || !filter.scheduleIds.includes(event.scheduleId))) return false;
  const wanted = Object.entries(filter.labels);
  if (wanted.length === 0) return true;
  return event.subject !== null && wanted.every(([key, value]) => event.subject!.labels[key] === value);
}

/** A delivery's JSON body. */
export interface DeliveryBody {
  id: string;
  type: DomainEventTopic;
  occurredAt: string;
  namespace: string;
  data: Record<string, unknown>;
}

/** The dashboard page an event's data links to, under the public URL; null without one. */
export function eventLink(publicUrl: string | null, data: Record<string, unknown>): string | null {
  if (publicUrl === null) return null;
  const base = `${publicUrl.replace(/\/+$/, '')}/ui`;
  if (typeof data.runId === 'string') return `${base}/runs/${data.runId}`;
  if (typeof data.sensorId === 'string') return `${base}/sensors/${data.sensorId}`;
  if (typeof data.scheduleId === 'string') return `${base}/schedules/${data.scheduleId}`;
  return `${base}/cluster`;
}

/**
 * The body of an event's deliveries: its payload as data, with the name of what it is about
 * (`scheduleName` or `sensorName`) and a link to the dashboard.
 */
export function deliveryBody(
  event: { id: number | string; topic: DomainEventTopic; createdAt: string; payload: Record<string, unknown> },
  namespace: string,
  subject: EventSubjectInfo | null,
  publicUrl: string | null,
): DeliveryBody {
  const data: Record<string, unknown> = { ...event.payload };
  if (subject !== null) data[subject.kind === 'schedule' ? 'scheduleName' : 'sensorName'] = subject.name;
  data.link = eventLink(publicUrl, data);
  return { id: String(event.id), type: event.topic, occurredAt: event.createdAt, namespace, data };
}

const str = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);

/** One line saying what happened, for people: the Slack message's text. */
export function eventSummary(body: DeliveryBody): string {
  const d = body.data;
  const schedule = str(d.scheduleName) ?? str(d.name) ?? str(d.scheduleId);
  const of = schedule === null ? '' : ` of schedule "${schedule}"`;
  const reason = [str(d.reasonCode), str(d.reasonText)].filter((x) => x !== null).join(': ');
  const because = reason ? ` (${reason})` : '';
  const attempt = typeof d.attempt === 'number' ? ` attempt ${d.attempt}${typeof d.maxAttempts === 'number' ? `/${d.maxAttempts}` : ''}` : '';
  switch (body.type) {
    case 'run.succeeded':
      return `Run ${d.runId}${of} succeeded${attempt ? ` on${attempt}` : ''}`;
    case 'run.failed':
      return `Run ${d.runId}${of} failed${attempt ? ` on${attempt}` : ''}${because}${d.willRetry === true ? '; it will be retried' : ''}`;
    case 'run.dead':
      return `Run ${d.runId}${of} is dead${because}`;
    case 'schedule.missed':
      return `Schedule "${schedule}" missed its slot ${d.scheduledFor}${because}`;
    case 'schedule.late':
      return `Schedule "${schedule}" is late: the run of its slot ${d.scheduledFor} had not succeeded by ${d.deadline}${d.runState ? ` (it is ${d.runState})` : ' (no run was made)'}`;
    case 'schedule.recovered':
      return `Schedule "${schedule}" recovered: its slot ${d.scheduledFor} succeeded in time`;
    case 'sensor.failed':
      return `Sensor "${str(d.sensorName) ?? d.sensorId}" failed an evaluation${because}`;
    case 'outage.detected':
      return `Outage: no scheduler${d.partition === null || d.partition === undefined ? '' : ` owned partition ${d.partition}`} from ${d.startedAt} to ${d.endedAt}${because}`;
    case 'subscription.disabled':
      return `Subscription ${d.subscriptionId} (to ${d.host}) was disabled: ${d.reason}`;
    case 'ping':
      return `Kairos test delivery to subscription ${d.subscriptionId}`;
    default:
      return `Schedule "${schedule}": ${body.type.slice('schedule.'.length)}${str(d.actor) ? ` by ${d.actor}` : ''}`;
  }
}

/** A Slack incoming-webhook message for the event: its summary as text, and blocks with the link. */
export function slackMessage(body: DeliveryBody): { text: string; blocks: unknown[] } {
  const text = `[${body.namespace}] ${eventSummary(body)}`;
  const link = str(body.data.link);
  const context = [`*${body.type}*`, `event ${body.id}`, body.occurredAt, ...(link ? [`<${link}|Open in Kairos>`] : [])];
  return {
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: context.join(' · ') }] },
    ],
  };
}

/** The first retry waits this long; each next one twice as long, up to DELIVERY_BACKOFF_MAX_MS. */
export const DELIVERY_BACKOFF_BASE_MS = 1_000;
export const DELIVERY_BACKOFF_MAX_MS = 3_600_000;

/** How long a delivery waits after its failed attempt `attempt` (1 for the first), before jitter. */
export function deliveryBackoffMs(attempt: number): number {
  return Math.min(DELIVERY_BACKOFF_MAX_MS, DELIVERY_BACKOFF_BASE_MS * 2 ** Math.min(attempt - 1, 30));
}

/** A judged slot of a schedule that expects its runs to succeed within `withinMs` of the slot. */
export interface ExpectedSlot {
  scheduledFor: Date;
  withinMs: number;
  /** The slot's run's state when judged; null when the slot made no run (skipped, missed). */
  runState: string | null;
  finishedAt: Date | null;
}

/** Whether the slot's run succeeded by its deadline (the slot plus `withinMs`). */
export function slotOnTime(slot: ExpectedSlot): boolean {
  return slot.runState === 'succeeded' && slot.finishedAt !== null && slot.finishedAt.getTime() <= slot.scheduledFor.getTime() + slot.withinMs;
}
