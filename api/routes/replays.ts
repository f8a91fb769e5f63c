// Replays as an API (docs/webhooks.md "Replays over the API"): POST
// /v1/webhook_endpoints/{id}/replay sends an endpoint's deliveries again, those of the events created
// in [since, until) or of a list of event ids, through the paged replay the CLI's `deliveries replay`
// and the dashboard use (ingest/webhook-replays.ts: a progress row and a redelivery workflow that reads the
// deliveries a page at a time, so a replay may be of any size), and answers 202 with the replay;
// GET /v1/replays/{id} reads its progress. Only replays of the key's issuer's endpoints in its mode
// are found (else 404). Body and path (400) before scope (403) before the endpoint (404); an event
// whose payload expired (docs/privacy.md) is refused with 409.
import { randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import type { Client } from '@temporalio/client';
import type { Pool } from '../../db/pool.js';
import { findEndpointSettings } from '../../db/webhook-endpoint-settings.js';
import {
  addReplayProgress,
  createReplay,
  findEndpointReplay,
  getReplay,
  type ReplayFilter,
  type ReplayProgress,
} from '../../db/webhook-replays.js';
import { replayEventsBody, replayId, replayRangeBody } from '../../domain/webhook-event-schemas.js';
import type { Config } from '../../platform/config.js';
import { PayloadExpired, replayDeliveries } from '../../ingest/webhook-replays.js';
import { badRequest, conflict, notFound, parseOrBadRequest } from '../errors.js';
import { checkScope } from '../middleware/auth.js';
import { jsonBody } from '../middleware/json-body.js';
import { endpointIdParam, endpointNotFound } from '../route-params.js';

function toReplayBody(replay: ReplayProgress) {
  return {
    id: replay.id,
    endpoint_id: replay.endpointId!,
    status: replay.status,
    total: replay.total,
    sent: replay.sent,
    failed: replay.failed,
    created_at: replay.createdAt.toISOString(),
    completed_at: replay.completedAt ? replay.completedAt.toISOString() : null,
  };
}

/** The body as one of its two variants, picked by `event_ids`, so that a 400 names the failing field. */
function parseReplayBody(body: unknown): { since: Date; until: Date } | { eventIds: string[] } {
  if (typeof body === 'object' && body !== null && !Array.isArray(body) && 'event_ids' in body) {
    return { eventIds: [...new Set(parseOrBadRequest(replayEventsBody, body).event_ids)] };
  }
  const range = parseOrBadRequest(replayRangeBody, body);
  const since = new Date(range.since);
  const until = new Date(range.until);
  if (since >= until) throw badRequest('until: must be later than since');
  return { since, until };
}

export function replayRoutes(router: Router, deps: { pool: Pool; temporal: Client; config: Pick<Config, 'TEMPORAL_TASK_QUEUE'> }): void {
  const { pool } = deps;

  router.post('/v1/webhook_endpoints/:webhook_endpoint_id/replay', jsonBody(), async (ctx) => {
    const id = endpointIdParam(ctx.params.webhook_endpoint_id);
    const request = parseReplayBody(ctx.request.body);
    const key = checkScope(ctx.state.apiKey, 'webhooks:write');
    const endpoint = await findEndpointSettings(pool, key.issuerId, key.mode, id);
    if (!endpoint) throw endpointNotFound(id);
    if (endpoint.pausedAt) throw conflict('this endpoint is disabled; enable it (PATCH disabled: false) before replaying to it');
    const filter: ReplayFilter = { endpointId: id, ...request };
    const started = await replayDeliveries({ pool, temporal: deps.temporal, taskQueue: deps.config.TEMPORAL_TASK_QUEUE }, filter).catch(
      (error: unknown) => {
        throw error instanceof PayloadExpired ? conflict(error.message) : error;
      },
    );
    let replay: string;
    if (started) replay = started.id;
    else {
      // Nothing matched: a replay with nothing to do, completed at once, so the answer is the same shape.
      replay = `replay-${randomUUID()}`;
      await createReplay(pool, { id: replay, filter, total: 0 });
      await addReplayProgress(pool, replay, { run: replay, delivered: 0, failed: 0, skipped: 0, done: true });
    }
    ctx.status = 202;
    ctx.set('Location', `/v1/replays/${replay}`);
    ctx.body = toReplayBody((await getReplay(pool, replay))!);
  });

  router.get('/v1/replays/:replay_id', async (ctx) => {
    const id = parseOrBadRequest(replayId, ctx.params.replay_id, 'replay_id');
    const key = checkScope(ctx.state.apiKey, 'webhooks:read');
    const replay = await findEndpointReplay(pool, key.issuerId, key.mode, id);
    if (!replay) throw notFound(`no replay ${id} for this key's issuer and mode`);
    ctx.body = toReplayBody(replay);
  });
}
