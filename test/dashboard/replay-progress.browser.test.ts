// The progress of a range replay on the delivery log page (docs/webhooks.md "Replays"): a
// replay started from the page is listed under "Recent replays" with what it matched and how many
// it has sent, delivered and failed, until it completes. A real worker and a real local receiver.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { createWebhookEvents } from '../support/webhook-events.js';
import { sampleStatusRecord } from '../../domain/sample-event.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { addEndpoint, until } from './webhook-helpers.js';
import { expectAccessible, signIn, startBrowserHarness, type BrowserHarness, type DashboardUser } from './support.js';

let h: BrowserHarness;
let receiver: Receiver;
let user: DashboardUser;
let page: Page;

beforeAll(async () => {
  h = await startBrowserHarness({ worker: true, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await startReceiver();
  user = await h.createUser({ issuerName: 'Replay Progress Bank' });
  page = await h.newPage();
  await signIn(page, user);
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

describe('delivery log: replay progress', () => {
  it('shows a range replay with its matched, sent, delivered and failed counts until it completes', async () => {
    const endpoint = await addEndpoint(page, { url: receiver.url, events: ['status.updated'] });
    const COUNT = 30;
    for (let i = 0; i < COUNT; i += 1) {
      const dispatchId = randomUUID();
      const timestamp = new Date().toISOString();
      const data = { ...sampleStatusRecord('status.updated', new Date()), id: dispatchId };
      await createWebhookEvents(h.pool, { dispatchId, issuerId: user.issuerId, mode: 'live', events: [{ type: 'status.updated', timestamp, data }] }); // prettier-ignore
    }
    await page.goto(`/dashboard/webhooks/${endpoint.id}/deliveries`);
    await page.getByRole('button', { name: 'Replay range' }).click();
    expect(await page.getByRole('status').textContent()).toMatch(new RegExp(`^Replay started for ${COUNT} events`));
    const replays = page.getByRole('list', { name: 'Recent replays' });
    const line = await until(
      async () => {
        await page.reload();
        const text = (await replays.getByRole('listitem').first().textContent()) ?? '';
        return text.includes('completed') ? text : undefined;
      },
      'the replay to complete',
      60_000,
    );
    expect(line).toMatch(new RegExp(`completed · ${COUNT} matched · ${COUNT} sent · ${COUNT} delivered · 0 failed · 0 skipped`));
    await expectAccessible(page);
  });
});
