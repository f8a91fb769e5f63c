// What the tracking-feed tests share: creating a feed through the API, signing a body the way each
// provider signs it (from the providers' published schemes, DESIGN §10, not from our modules, so a
// test can catch a module that checks the wrong thing), posting it to the feed's inbound URL, and a
// small EasyPost body.
import { createHmac } from 'node:crypto';
import { bearer, request, type TestResponse } from '../api/http.js';

export interface CreatedFeed {
  id: string;
  url: string;
  secret?: string;
}

export async function createFeed(baseUrl: string, key: string, provider: string, secret?: string): Promise<CreatedFeed> {
  const res = await request(baseUrl, '/v1/tracking_feeds', { headers: bearer(key), body: { provider, ...(secret ? { secret } : {}) } });
  if (res.status !== 201) throw new Error(`feed not created: ${res.status} ${res.text}`);
  return { id: res.body.id, url: res.body.url, secret };
}

/** The headers (and query) with which `provider` authenticates `raw` (docs/tracking-feeds.md). */
export function signed(provider: string, raw: string, feed: CreatedFeed): { headers: Record<string, string>; query: string } {
  switch (provider) {
    case 'easypost':
      return {
        headers: {
          'x-hmac-signature': `hmac-sha256-hex=${createHmac('sha256', feed.secret!.normalize('NFKD')).update(raw).digest('hex')}`,
        },
        query: '',
      };
    case 'aftership':
      return { headers: { 'aftership-hmac-sha256': createHmac('sha256', feed.secret!).update(raw).digest('base64') }, query: '' };
    case 'ship24':
      return { headers: { authorization: `Bearer ${feed.secret}` }, query: '' };
    case 'shippo':
      return { headers: {}, query: new URL(feed.url).search };
    default:
      throw new Error(`no signing for ${provider}`);
  }
}

/** POSTs `raw` to the feed's inbound path, signed as `provider` signs unless `headers`/`query` are given. */
export function postInbound(
  baseUrl: string,
  provider: string,
  feed: CreatedFeed,
  raw: string,
  override?: { headers?: Record<string, string>; query?: string },
): Promise<TestResponse> {
  const sign = signed(provider, raw, feed);
  const headers = { 'content-type': 'application/json', ...(override?.headers ?? sign.headers) };
  return request(baseUrl, `/v1/inbound/${feed.id}${override?.query ?? sign.query}`, { headers, body: raw });
}

/** An EasyPost tracker.updated Event (the fields of @easypost/api's Event and Tracker types). */
export function easyPostBody(
  trackingCode: string,
  details: Array<{ status: string; datetime: string; status_detail?: string }>,
  carrier = 'USPS',
) {
  return JSON.stringify({
    object: 'Event',
    id: `evt_${trackingCode}`,
    description: 'tracker.updated',
    mode: 'test',
    result: {
      id: `trk_${trackingCode}`,
      object: 'Tracker',
      mode: 'test',
      tracking_code: trackingCode,
      status: details.at(-1)?.status ?? 'unknown',
      carrier,
      tracking_details: details.map((detail) => ({
        object: 'TrackingDetail',
        message: detail.status,
        status: detail.status,
        status_detail: detail.status_detail ?? detail.status,
        datetime: detail.datetime,
        source: carrier,
        tracking_location: { object: 'TrackingLocation', city: 'Springfield', state: 'IL', country: 'US', zip: null },
      })),
    },
  });
}
