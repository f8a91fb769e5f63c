// Steps shared by the webhook and delivery-log browser tests: add an endpoint through the page,
// send it a test event, and wait for what a real receiver gets.
import type { Page } from 'playwright-core';
import type { ReceivedRequest, Receiver } from '../support/receiver.js';

/** Adds an endpoint on Settings → Webhooks; returns its id and the secret shown once. */
export async function addEndpoint(
  page: Page,
  options: { url: string; events: string[]; mode?: 'Live' | 'Test' },
): Promise<{ id: string; secret: string }> {
  await page.goto('/dashboard/webhooks');
  await page.getByLabel('Endpoint URL').fill(options.url);
  for (const box of await page.getByRole('group', { name: 'Events' }).getByRole('checkbox').all()) await box.uncheck();
  for (const event of options.events) await page.getByRole('checkbox', { name: event, exact: true }).check();
  await page.getByRole('radio', { name: new RegExp(`^${options.mode ?? 'Live'}:`) }).check();
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const secret = await page.getByLabel(/^Signing secret of/).inputValue();
  const href = await page.getByRole('link', { name: 'Open the endpoint' }).getAttribute('href');
  return { id: href!.split('/').pop()!, secret };
}

/** Sends a test event from the endpoint's page; the answer is the event's page in the log. Returns the event id. */
export async function sendTestEvent(page: Page, endpointId: string, event = 'status.updated'): Promise<string> {
  await page.goto(`/dashboard/webhooks/${endpointId}`);
  await page.getByLabel('Event type').selectOption(event);
  await page.getByRole('button', { name: 'Send test event' }).click();
  await page.waitForURL(/\/deliveries\/evt_/);
  return new URL(page.url()).pathname.split('/').pop()!;
}

export async function until<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The requests the receiver got for one event id. */
export function requestsFor(receiver: Receiver, eventId: string): ReceivedRequest[] {
  return receiver.requests.filter((request) => request.headers['x-service-event-id'] === eventId);
}
