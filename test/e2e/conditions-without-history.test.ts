// docs/predictions.md "Conditions", end to end: on a database with no transit history at
// all (created and migrated for this file), an operator's `conditions set` (the CLI as a subprocess)
// moves the window of the next registration through the API (real worker, Temporal, Postgres), as
// it would a window learnt from history.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { addBusinessDays, businessDayOnOrAfter } from '../../domain/calendar.js';
import { bearer, request } from '../api/http.js';
import { runCli } from '../support/cli.js';
import { startHarness, type Harness } from '../support/harness.js';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.js';

let database: ScratchDatabase;
let h: Harness;
let key: string;

beforeAll(async () => {
  database = await createScratchDatabase('cds_conditions', { migrate: true });
  h = await startHarness({ env: { DATABASE_URL: database.url } });
  key = (await h.createKey(await h.createIssuer('Conditions Issuer'))).key;
}, 60_000);

afterAll(async () => {
  await h?.stop();
  await database?.drop();
});

const utcToday = () => new Date().toISOString().slice(0, 10);

/** The window the default table gives a dispatch registered on `day`: `days` business days after its first business day. */
function windowOf(day: string, days: [number, number]): { min: string; max: string } {
  const start = businessDayOnOrAfter(day, 'FR');
  return { min: addBusinessDays(start, days[0], 'FR'), max: addBusinessDays(start, days[1], 'FR') };
}

/**
 * Registers a dispatch to the postal code, dated now by the service, and expects its window to be
 * `days` business days after the first business day of the day it was registered on: the day
 * before or after the request, which differ only when it crosses midnight UTC.
 */
async function expectWindow(postalCode: string, days: [number, number]): Promise<void> {
  const before = utcToday();
  const res = await request(h.baseUrl, '/v1/dispatches', {
    headers: bearer(key),
    body: { id: randomUUID(), destination: { postal_code: postalCode, country_code: 'FR' } },
  });
  const after = utcToday();
  expect(res.status).toBe(201);
  expect([windowOf(before, days), windowOf(after, days)]).toContainEqual(res.body.prediction.delivery_window);
}

describe('a declared delay on a database without history', () => {
  it('moves the default table’s window of its country by the delay, widened by a third of it each side', async () => {
    const { rows } = await h.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM transit_history');
    expect(rows[0].n).toBe(0);
    // FR's default table: 2–4 business days, 2 more at the late end for a Low window.
    await expectWindow('75011', [2, 6]);
    const set = await runCli(['conditions', 'set', '--country', 'FR', '--delay-days', '3', '--json'], { DATABASE_URL: database.url });
    expect(set.code).toBe(0);
    await expectWindow('75011', [2 + 3 - 1, 6 + 3 + 1]);
  }, 60_000);

  it('moves only the windows of the postal prefix a delay names', async () => {
    const set = await runCli(['conditions', 'set', '--country', 'FR', '--postal-prefix', '13', '--delay-days', '6', '--json'], { DATABASE_URL: database.url }); // prettier-ignore
    expect(set.code).toBe(0);
    // Marseille gets the worse of the country's 3 days and its prefix's 6; Paris keeps the country's 3.
    await expectWindow('13001', [2 + 6 - 2, 6 + 6 + 2]);
    await expectWindow('75011', [2 + 3 - 1, 6 + 3 + 1]);
  }, 60_000);
});
