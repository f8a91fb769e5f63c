// A tracking feed's checkpoint finds its dispatch by tracking number (db/feed-checkpoints.ts
// matchCandidates, read by ingest/tracking-feeds.ts; docs/tracking-feeds.md), and an erasure finds
// the unmatched checkpoints that name an erased dispatch by it (db/erasure.ts). Both compare the
// tracking number as domain/tracking-feeds/provider.ts normaliseTrackingNumber makes it, for any
// tracking number the API takes: an issuer pastes "1Z 999" with a no-break space as often as not, and
// the API sets no alphabet. Against the real test Postgres.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { writeDispatchChange } from '../../db/dispatch-changes.js';
import { dispatchFootprint, eraseDispatchRows } from '../../db/erasure.js';
import { keepUnmatched, matchCandidates } from '../../db/feed-checkpoints.js';
import { createIssuer } from '../../db/issuers.js';
import { createFeed } from '../../db/tracking-feeds.js';
import { createPool, type Pool } from '../../db/pool.js';
import { registrationBody } from '../../domain/dispatch-schemas.js';
import { normaliseTrackingNumber } from '../../domain/tracking-feeds/provider.js';
import { requireTestEnv } from '../support/env.js';

let pool: Pool;
let issuerId: string;

beforeAll(async () => {
  pool = createPool(requireTestEnv('TEST_DATABASE_URL'), { max: 2, applicationName: 'test-feed-matching' });
  issuerId = (await createIssuer(pool, 'Feed matching')).id;
});

afterAll(async () => {
  await pool?.end();
});

/** A live dispatch registered with `trackingNumber`, as its first change writes it. */
async function register(trackingNumber: string): Promise<string> {
  const id = randomUUID();
  await writeDispatchChange(
    pool,
    {
      dispatch: {
        id,
        issuerId,
        mode: 'live',
        dispatchDate: '2026-11-20T09:00:00Z',
        postalCode: '75011',
        countryCode: 'FR',
        trackingNumber,
        registration: '{}',
      },
      projection: { version: 1, status: 'dispatched', windowMin: '2026-11-23', windowMax: '2026-11-24', confidenceLevel: 'Low', record: {} as never }, // prettier-ignore
      effects: [],
      events: [],
      timestamp: new Date().toISOString(),
    },
    `dispatch:${id}`,
  );
  return id;
}

const matches = async (trackingNumber: string) =>
  (await matchCandidates(pool, { issuerId, mode: 'live', references: [], trackingNumber: normaliseTrackingNumber(trackingNumber), dedupeKeys: [] })).map((c) => c.id); // prettier-ignore

describe('a checkpoint’s tracking number', () => {
  it('finds the dispatch registered with it, written with spaces of any kind and letters of any case or alphabet', async () => {
    const nbsp = await register('1Z\u00a0999 AA1');
    expect(await matches('1z999aa1')).toContain(nbsp);
    const sharp = await register('straße-42');
    expect(await matches('STRASSE-42')).toContain(sharp);
  });

  it('finds the dispatch registered with it, for any tracking number the API takes', async () => {
    const accepted = (text: string) => registrationBody.shape.tracking_number.safeParse(text);
    const trackingNumber = fc
      .oneof(
        fc.stringMatching(/^[0-9A-Za-z -]{1,30}$/),
        fc.string({ minLength: 1, maxLength: 30, unit: 'grapheme' }),
        fc.string({ minLength: 1, maxLength: 30, unit: 'binary' }),
      ) // prettier-ignore
      .filter((text) => accepted(text).success);
    await fc.assert(
      fc.asyncProperty(trackingNumber, async (text) => {
        const id = await register(text);
        expect(await matches(text)).toContain(id);
      }),
      { numRuns: 100 },
    );
  });

  it('names its dispatch to an erasure, which removes it as unmatched', async () => {
    const id = await register('1Z\u00a0777 ß');
    const feed = await createFeed(pool, { issuerId, mode: 'live', provider: 'easypost', secret: 'whsec_test', description: null });
    await keepUnmatched(pool, [
      {
        feedId: feed.id,
        issuerId,
        mode: 'live',
        trackingNumber: normaliseTrackingNumber('1Z\u00a0777 ß'),
        carrier: null,
        references: [],
        eventId: 'ev-1',
        status: 'in_transit',
        reason: null,
        location: null,
        time: { utc: '2026-11-21T10:00:00Z' },
        original: {},
      },
    ]);
    expect((await dispatchFootprint(pool, id)).feed_unmatched_checkpoints).toBe(1);
    await eraseDispatchRows(pool, [id]);
    expect((await dispatchFootprint(pool, id)).feed_unmatched_checkpoints).toBe(0);
  });
});
