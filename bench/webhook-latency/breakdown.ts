// Where the time of one webhook goes, from timestamps the product already leaves behind (no product
// code changed): the driver's send and 202 times, carrier_events.received_at (API), the workflow
// history's event times (signal, workflow task, the projection's local-activity marker and the
// delivery activity), webhook_events.created_at (inside the projection's local activity),
// delivery_attempts.started_at (inside the delivery activity) and the receiver's arrival time. All
// clocks are this machine's.
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Pool } from '../../db/pool.js';
import { median } from '../status-read/report.js';

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

/** One event's journey, each point in ms since the POST was sent. */
export type Timeline = Partial<Record<PointName, number>>;

export const POINTS = [
  ['stored', 'API: carrier event stored (carrier_events.received_at)'],
  ['signalled', 'signal recorded in the workflow history'],
  ['answered', 'API 202 received by the sender'],
  ['stickyTimedOut', 'workflow task timed out (schedule-to-start, the sticky timeout) and scheduled again'],
  ['wft1Started', 'workflow task started (worker took the signal)'],
  ['eventCreated', 'projectChange (local activity): projection written, webhook event stored (webhook_events.created_at)'],
  ['deliveryScheduled', 'workflow task completed: projectChange marker recorded, deliverWebhooks scheduled'],
  ['deliveryStarted', 'deliverWebhooks started'],
  ['attemptStarted', 'attempt started (delivery_attempts.started_at)'],
  ['arrived', 'request fully arrived at the receiver'],
] as const;
export type PointName = (typeof POINTS)[number][0];

export interface SentAndArrived {
  dispatchId: string;
  sentAt: number;
  answeredAt: number;
  arrivedAt: number;
}

/** The database's points for every event: one query over the latency phase's dispatches. */
export async function databasePoints(pool: Pool, events: SentAndArrived[], status: string): Promise<Map<string, Timeline>> {
  const { rows } = await pool.query<{ id: string; stored: Date; event_created: Date; attempt_started: Date }>(
    `SELECT ce.dispatch_id::text AS id, ce.received_at AS stored, we.created_at AS event_created, da.started_at AS attempt_started
       FROM carrier_events ce
       JOIN webhook_events we ON we.dispatch_id = ce.dispatch_id AND we.type = 'status.updated'
                             AND convert_from(we.body, 'UTF8')::jsonb -> 'data' ->> 'status' = $2
       JOIN delivery_attempts da ON da.event_id = we.id AND da.attempt = 1
      WHERE ce.dispatch_id = ANY ($1::uuid[]) AND ce.status = $2`,
    [events.map((e) => e.dispatchId), status],
  );
  const byId = new Map(events.map((e) => [e.dispatchId, e]));
  const timelines = new Map<string, Timeline>();
  for (const row of rows) {
    const sent = byId.get(row.id)!;
    timelines.set(row.id, {
      stored: row.stored.getTime() - sent.sentAt,
      answered: sent.answeredAt - sent.sentAt,
      eventCreated: row.event_created.getTime() - sent.sentAt,
      attemptStarted: row.attempt_started.getTime() - sent.sentAt,
      arrived: sent.arrivedAt - sent.sentAt,
    });
  }
  return timelines;
}

const toNumber = (value: unknown) => Number(String(value ?? 0));
const eventMs = (event: HistoryEvent) => toNumber(event.eventTime?.seconds) * 1000 + (event.eventTime?.nanos ?? 0) / 1e6;

/** History events written per signal: those from the first signal on, divided by the signals (settled workflows only). */
export async function historyEventsPerSignal(temporal: Client, workflowId: string): Promise<number> {
  const events = (await temporal.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const from = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes);
  const signals = events.filter((e) => e.workflowExecutionSignaledEventAttributes).length;
  return signals ? Math.round(((events.length - from) / signals) * 10) / 10 : NaN;
}

/** History events before the first carrier-event signal: what a cold worker replays before it handles it. */
export async function historyEventsBeforeFirstSignal(temporal: Client, workflowId: string): Promise<number> {
  const events = (await temporal.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  return events.findIndex((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'carrierEvent');
}

/** The history's points for the first carrier-event signal of one dispatch workflow. */
export async function historyPoints(temporal: Client, dispatchId: string, sentAt: number): Promise<Timeline> {
  const events = (await temporal.workflow.getHandle(dispatchId).fetchHistory()).events ?? [];
  const from = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'carrierEvent');
  if (from < 0) return {};
  const after = events.slice(from);
  const at = (event: HistoryEvent | undefined) => (event ? eventMs(event) - sentAt : undefined);
  const scheduled = (type: string) => after.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type);
  const startedOf = (s: HistoryEvent | undefined) =>
    s && after.find((e) => toNumber(e.activityTaskStartedEventAttributes?.scheduledEventId) === toNumber(s.eventId));
  // A change's first attempts are one deliverWebhooks activity (workflows/deliveries.ts).
  const delivery = scheduled('deliverWebhooks');
  return {
    signalled: at(after[0]),
    stickyTimedOut: at(after.find((e) => e.workflowTaskTimedOutEventAttributes)),
    wft1Started: at(after.find((e) => e.workflowTaskStartedEventAttributes)),
    deliveryScheduled: at(delivery),
    deliveryStarted: at(startedOf(delivery)),
  };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

export interface BreakdownRow {
  point: PointName;
  label: string;
  /** Over the events that have this point. */
  medianMs: number;
  p99Ms: number;
  /** Median of (this point − the previous point that exists, the 202 aside), per event. */
  stepMedianMs: number;
  events: number;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** Points no sampled event has are left out (e.g. the sticky timeout, when no workflow task timed out). */
export function summariseBreakdown(timelines: Timeline[]): BreakdownRow[] {
  const rows = POINTS.map(([point, label], index) => {
    const values = timelines.map((t) => t[point]).filter((v): v is number => v !== undefined);
    const steps = timelines
      .map((t) => {
        const value = t[point];
        if (value === undefined) return undefined;
        // The 202 is a side branch (the workflow does not wait for it): no step is measured from it.
        const previous = POINTS.slice(0, index)
          .filter(([name]) => name !== 'answered')
          .map(([name]) => t[name])
          .filter((v): v is number => v !== undefined)
          .at(-1);
        return value - (previous ?? 0);
      })
      .filter((v): v is number => v !== undefined);
    return {
      point,
      label,
      medianMs: round1(median(values)),
      p99Ms: round1(percentile(values, 0.99)),
      stepMedianMs: round1(median(steps)),
      events: values.length,
    };
  });
  return rows.filter((row) => row.events > 0);
}
