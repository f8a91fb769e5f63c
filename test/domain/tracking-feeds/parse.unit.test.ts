// Reading each provider's body (domain/tracking-feeds/*.ts, DESIGN §10): a body not in the provider's
// shape names the failing field (in the service's words); a well-formed event about something else (an account-wide webhook
// also sends those) gives no tracking rather than a 400; references, carrier and event ids come from
// the fields the provider documents; a webhook's own send time is never a checkpoint's time; and the
// time rules particular to a provider (Shippo's UTC `status_date`, Ship24's `utcOffset`) hold.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { FEED_PROVIDER_MODULES, resolveCheckpointTime, type FeedProvider, type ParseResult } from '../../../domain/tracking-feeds/index.js';
import { fixtureBody, FIXTURE_REFERENCE } from '../../fixtures/tracking-feeds/load.js';

const parse = (provider: FeedProvider, body: unknown) => FEED_PROVIDER_MODULES[provider].parse(body);
const trackingsOf = (result: ParseResult) => {
  if (!result.ok) throw new Error(result.message);
  return result.trackings;
};

describe('a body not in the provider shape', () => {
  const cases: [FeedProvider, string, (body: any) => unknown, string][] = [
    ['easypost', 'not an object', () => null, 'body'],
    ['easypost', 'not an Event', (b) => ({ ...b, object: 'Tracker' }), 'object'],
    [
      'easypost',
      'a tracker without its tracking code',
      (b) => ({ ...b, result: { ...b.result, tracking_code: undefined } }),
      'result.tracking_code',
    ],
    [
      'easypost',
      'a checkpoint time that is not text',
      (b) => ((b.result.tracking_details[2].datetime = 1763647500), b),
      'result.tracking_details.2.datetime',
    ],
    ['aftership', 'no event', (b) => ({ msg: b.msg }), 'event'],
    ['aftership', 'a tag that is not text', (b) => ((b.msg.checkpoints[0].tag = 7), b), 'msg.checkpoints.0.tag'],
    ['aftership', 'checkpoints that are not a list', (b) => ((b.msg.checkpoints = {}), b), 'msg.checkpoints'],
    ['shippo', 'no data tracking number', (b) => (delete b.data.tracking_number, b), 'data.tracking_number'],
    [
      'shippo',
      'a status date that is not a time',
      (b) => ((b.data.tracking_history[1].status_date = 42), b),
      'data.tracking_history.1.status_date',
    ],
    ['ship24', 'trackings that are not a list', () => ({ trackings: 'all' }), 'trackings'],
    ['ship24', 'no trackings', () => ({ data: [] }), 'trackings'],
    // No tracking of the body in Ship24's shape: the body is not Ship24's (DESIGN §10), as before groups.
    ['ship24', 'its only tracking without its tracker', (b) => (delete b.trackings[0].tracker, b), 'trackings.0.tracker'],
    ['ship24', 'every tracking not an object', () => ({ trackings: [42, 'x'] }), 'trackings.0'],
    // Text Postgres cannot keep (half of a surrogate pair alone): the checkpoints' jsonb write failed, a 500.
    ['easypost', 'a city holding an unpaired surrogate', (b) => ((b.result.tracking_details[1].tracking_location.city = 'HARRISBURG\ud83c'), b), 'result.tracking_details.1.tracking_location.city'], // prettier-ignore
    ['aftership', 'a custom dispatch_id holding an unpaired surrogate', (b) => ((b.msg.custom_fields.dispatch_id = '\udc00'), b), 'msg.custom_fields.dispatch_id'], // prettier-ignore
    [
      'shippo',
      'a tracking number holding an unpaired surrogate',
      (b) => ((b.data.tracking_number = '9205\ud800'), b),
      'data.tracking_number',
    ],
    ['ship24', 'its only tracking with a location holding an unpaired surrogate', (b) => ((b.trackings[0].events[2].location = 'BORDEAUX\ud83c'), b), 'trackings.0.events.2.location'], // prettier-ignore
  ];
  it.each(cases.map(([provider, what, change, field]) => [provider, what, field, change] as const))(
    '%s: %s → names %s',
    (provider, _what, field, change) => {
      const result = parse(provider, change(fixtureBody(provider)));
      expect(result).toEqual({ ok: false, field, message: expect.stringMatching(new RegExp(`^${field.replace(/\./g, '\\.')}: `)) });
      // In the service's words (domain/field-errors.ts), not zod's.
      expect(!result.ok && result.message).not.toMatch(
        /Invalid input|Invalid option|Unrecognized key|Too big|Too small|expected .*, received/,
      );
    },
  );
});

describe("a Ship24 group with one tracking not in Ship24's shape", () => {
  // The envelope `{ trackings: [...] }` is Ship24's shape (a 400 otherwise, above); one tracking in it
  // that is not must not block the others: it comes back flagged `malformed` (naming the field), each
  // of its events one checkpoint that says nothing usable (ignored and listed by ingest), under the
  // event id it would have had, so that a corrected resend takes it off the ignored list.
  const grouped = (change: (bad: any) => unknown) => {
    const body = fixtureBody('ship24');
    const good = structuredClone(body.trackings[0]);
    good.tracker.trackingNumber = '6A21874356099';
    const bad = structuredClone(body.trackings[0]);
    body.trackings = [change(bad) ?? bad, good];
    return { body, good };
  };
  const EVENTS = fixtureBody('ship24').trackings[0].events.length;
  const cases: [string, (bad: any) => unknown, string, number][] = [
    ['a milestone that is not text', (t) => void (t.events[3].statusMilestone = ['delivered']), 'trackings.0.events.3.statusMilestone', EVENTS], // prettier-ignore
    ['a tracking without its tracker', (t) => void delete t.tracker, 'trackings.0.tracker', EVENTS],
    ['a tracker without its trackerId', (t) => void (t.tracker.trackerId = 7), 'trackings.0.tracker.trackerId', EVENTS],
    ['events that are not a list', (t) => void (t.events = 'all'), 'trackings.0.events', 1],
    ['a tracking that is not an object', () => 42, 'trackings.0', 1],
    ['a location holding an unpaired surrogate', (t) => void (t.events[2].location = 'BORDEAUX\ud83c'), 'trackings.0.events.2.location', EVENTS], // prettier-ignore
  ];
  it.each(cases.map(([what, change, field, count]) => [what, field, change, count] as const))(
    '%s: flagged naming %s, the others read',
    (_what, field, change, count) => {
      const { body, good } = grouped(change);
      const [bad, read] = trackingsOf(parse('ship24', body));
      expect(bad.malformed).toEqual({ field, message: expect.stringMatching(new RegExp(`^${field.replace(/\./g, '\\.')}: `)) });
      expect(bad.checkpoints).toHaveLength(count);
      expect(bad.checkpoints.every((c) => c.mapped === null)).toBe(true);
      expect(JSON.stringify(bad)).not.toMatch(/\\ud[89a-f]/i); // nothing read from it that Postgres cannot keep
      expect(read).toEqual(trackingsOf(parse('ship24', { trackings: [good] }))[0]);
      expect(read.malformed).toBeUndefined();
    },
  );

  it('keeps the event ids (and the tracking number) a corrected resend will have', () => {
    const { body } = grouped((t) => void (t.events[3].statusMilestone = ['delivered']));
    const corrected = fixtureBody('ship24');
    const [bad] = trackingsOf(parse('ship24', body));
    const [fixed] = trackingsOf(parse('ship24', corrected));
    expect(bad.checkpoints.map((c) => c.eventId)).toEqual(fixed.checkpoints.map((c) => c.eventId));
    expect(bad.trackingNumber).toBe(fixed.trackingNumber);
  });

  it('holds for any value put in place of any field of a tracking: the body is read, the other tracking intact', () => {
    const fields = ['tracker', 'events', 'metadata'];
    fc.assert(
      fc.property(fc.constantFrom(...fields), fc.anything(), (name, value) => {
        const { body, good } = grouped((t) => void (t[name] = value));
        const result = parse('ship24', body);
        expect(result.ok).toBe(true);
        const trackings = trackingsOf(result);
        expect(trackings[1]).toEqual(trackingsOf(parse('ship24', { trackings: [good] }))[0]);
      }),
    );
  });
});

describe('a checkpoint without what the provider may leave out (its time, or its status where optional)', () => {
  const cases: [FeedProvider, string, (body: any) => unknown][] = [
    ['aftership', 'no checkpoint_time', (b) => (delete b.msg.checkpoints[4].checkpoint_time, b)],
    ['aftership', 'a blank checkpoint_time', (b) => ((b.msg.checkpoints[4].checkpoint_time = ''), b)],
    ['aftership', 'a null tag', (b) => ((b.msg.checkpoints[4].tag = null), b)],
    ['shippo', 'a null status_date', (b) => ((b.data.tracking_history[4].status_date = null), b)],
    ['ship24', 'no occurrenceDatetime', (b) => (delete b.trackings[0].events[4].occurrenceDatetime, b)],
    ['ship24', 'no statusMilestone', (b) => (delete b.trackings[0].events[4].statusMilestone, b)],
  ];
  it.each(cases)('%s: %s → that checkpoint is ignored (mapped null), the body read', (provider, _what, change) => {
    const before = trackingsOf(parse(provider, fixtureBody(provider)))[0].checkpoints;
    expect(before[4].mapped).not.toBeNull();
    const checkpoints = trackingsOf(parse(provider, change(fixtureBody(provider))))[0].checkpoints;
    expect(checkpoints).toHaveLength(before.length);
    expect(checkpoints[4].mapped).toBeNull();
  });
});

describe('a checkpoint whose time or status is text that says nothing usable', () => {
  // Refused with 400 before: the provider resends the checkpoint with every later webhook of the
  // tracking, so one such checkpoint blocked the tracking for good (DESIGN §10: ignored, not refused).
  const cases: [FeedProvider, string, (body: any) => unknown, string | undefined][] = [
    ['easypost', 'a datetime that is not a time', (b) => ((b.result.tracking_details[4].datetime = 'yesterday'), b), 'yesterday'],
    ['easypost', 'an empty status', (b) => ((b.result.tracking_details[4].status = ''), b), undefined],
    ['aftership', 'a checkpoint_time that is not a time', (b) => ((b.msg.checkpoints[4].checkpoint_time = '20.11.2026'), b), '20.11.2026'],
    ['shippo', 'a status_date that is not a time', (b) => ((b.data.tracking_history[4].status_date = 'N/A'), b), 'N/A'],
    ['shippo', 'an empty status', (b) => ((b.data.tracking_history[4].status = ''), b), undefined],
    ['ship24', 'an occurrenceDatetime that is not a time', (b) => ((b.trackings[0].events[4].occurrenceDatetime = '2026-11-20T14:05:00+25:00'), b), '2026-11-20T14:05:00+25:00'], // prettier-ignore
  ];
  it.each(cases)('%s: %s → that checkpoint is ignored (mapped null), the others read as before', (provider, _what, change, unreadable) => {
    const before = trackingsOf(parse(provider, fixtureBody(provider)))[0].checkpoints;
    expect(before[4].mapped).not.toBeNull();
    const after = trackingsOf(parse(provider, change(fixtureBody(provider))))[0].checkpoints;
    expect(after).toHaveLength(before.length);
    expect(after[4].mapped).toBeNull();
    if (unreadable !== undefined) expect(after[4]).toMatchObject({ time: null, unreadableTime: unreadable });
    expect(after.filter((_, k) => k !== 4)).toEqual(before.filter((_, k) => k !== 4));
  });
});

describe('any checkpoint without its time', () => {
  // Where the provider's types make the time optional: the list of its checkpoints and the time field.
  const optional: Record<'aftership' | 'shippo' | 'ship24', { list: (b: any) => any[]; field: string }> = {
    aftership: { list: (b) => b.msg.checkpoints, field: 'checkpoint_time' },
    shippo: { list: (b) => b.data.tracking_history, field: 'status_date' },
    ship24: { list: (b) => b.trackings[0].events, field: 'occurrenceDatetime' },
  };
  it('is ignored, and every other checkpoint read as before, whichever it is and however it is missing', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...(Object.keys(optional) as Array<keyof typeof optional>)),
        fc.nat(),
        fc.constantFrom('absent', null, '', '  '),
        (provider, n, missing) => {
          const body = fixtureBody(provider);
          const list = optional[provider].list(body);
          const i = n % list.length;
          if (missing === 'absent') delete list[i][optional[provider].field];
          else list[i][optional[provider].field] = missing;
          const before = trackingsOf(parse(provider, fixtureBody(provider)))[0].checkpoints;
          const after = trackingsOf(parse(provider, body))[0].checkpoints;
          expect(after[i]).toMatchObject({ mapped: null, time: null });
          expect(after.filter((_, k) => k !== i)).toEqual(before.filter((_, k) => k !== i));
        },
      ),
    );
  });
});

describe('a well-formed event about something else', () => {
  it('gives no tracking: EasyPost events other than tracker.*, Shippo events other than track_updated', () => {
    expect(
      parse('easypost', { ...fixtureBody('easypost'), description: 'shipment.invoice.created', result: { object: 'ShipmentInvoice' } }),
    ).toEqual({ ok: true, trackings: [] });
    expect(parse('shippo', { event: 'transaction_created', test: true, data: { object_id: 'abc' } })).toEqual({ ok: true, trackings: [] });
  });

  it('gives a tracking without checkpoints for a Ship24 proof of delivery', () => {
    const pod = {
      trackings: [{ metadata: { topic: 'tracking/pod' }, tracker: fixtureBody('ship24').trackings[0].tracker, data: { status: 'found' } }],
    };
    expect(trackingsOf(parse('ship24', pod))).toEqual([expect.objectContaining({ checkpoints: [] })]);
  });
});

describe("an AfterShip tracking without checkpoints (optional in the SDK's Tracking)", () => {
  it.each([
    ['absent', (b: any) => (delete b.msg.checkpoints, b)],
    ['null', (b: any) => ((b.msg.checkpoints = null), b)],
  ])('%s: one tracking with no checkpoints, not a 400', (_what, change) => {
    expect(trackingsOf(parse('aftership', change(fixtureBody('aftership'))))).toEqual([
      expect.objectContaining({ trackingNumber: expect.any(String), checkpoints: [] }),
    ]);
  });
});

describe('how a tracking is named', () => {
  it('reads number, carrier, provider id and references from each provider', () => {
    expect(trackingsOf(parse('easypost', fixtureBody('easypost')))[0]).toMatchObject({
      trackingNumber: '9400111899223197428490',
      carrier: 'usps',
      providerTrackingId: expect.stringMatching(/^trk_/),
      references: [],
    });
    expect(trackingsOf(parse('aftership', fixtureBody('aftership')))[0]).toMatchObject({
      carrier: 'dhl',
      references: ['ORD-2026-118204', FIXTURE_REFERENCE],
    });
    expect(trackingsOf(parse('shippo', fixtureBody('shippo')))[0]).toMatchObject({
      carrier: 'usps',
      references: [`Order 118204, dispatch ${FIXTURE_REFERENCE}`, FIXTURE_REFERENCE],
    });
    expect(trackingsOf(parse('ship24', fixtureBody('ship24')))[0]).toMatchObject({
      carrier: 'fr-post',
      references: ['card-118204', FIXTURE_REFERENCE],
    });
  });

  it('reads every tracking of a grouped Ship24 body', () => {
    const body = fixtureBody('ship24');
    const second = structuredClone(body.trackings[0]);
    second.tracker = { ...second.tracker, trackerId: 'b6f5b6a8-6f0e-4f43-9d0a-2b8a1c9e7d10', trackingNumber: '6A21874356099' };
    body.trackings.push(second);
    expect(trackingsOf(parse('ship24', body)).map((t) => t.trackingNumber)).toEqual(['6A21874356012', '6A21874356099']);
  });
});

describe('event ids', () => {
  it("are the provider's own checkpoint ids where it gives them (AfterShip hash, Shippo object_id, Ship24 eventId)", () => {
    const aftership = fixtureBody('aftership');
    expect(trackingsOf(parse('aftership', aftership))[0].checkpoints[0].eventId).toBe(aftership.msg.checkpoints[0].hash);
    const shippo = fixtureBody('shippo');
    expect(trackingsOf(parse('shippo', shippo))[0].checkpoints[0].eventId).toBe(shippo.data.tracking_history[0].object_id);
    const ship24 = fixtureBody('ship24');
    expect(trackingsOf(parse('ship24', ship24))[0].checkpoints[0].eventId).toBe(ship24.trackings[0].events[0].eventId);
  });

  it('are a hash of provider, tracking, time, status and location otherwise, which any of them changes', () => {
    const body = fixtureBody('aftership-v4');
    const id = () => trackingsOf(parse('aftership', body))[0].checkpoints[0].eventId;
    const first = id();
    expect(first).toMatch(/^aftership_[0-9a-f]{40}$/);
    body.msg.checkpoints[0].message = 'another wording of the same scan';
    expect(id()).toBe(first);
    for (const change of [
      () => (body.msg.checkpoints[0].checkpoint_time = '2026-11-05T10:00:00'),
      () => (body.msg.checkpoints[0].location = 'Halle, Germany'),
      () => (body.msg.checkpoints[0].tag = 'Delivered'),
      () => (body.msg.id = 'another'),
    ]) {
      const before = id();
      change();
      expect(id()).not.toBe(before);
    }
  });

  it('are the same for an AfterShip checkpoint sent by a legacy v4 webhook and by a dated one (32-character id, the v4 id as legacy_id, no hash)', () => {
    const v4 = fixtureBody('aftership-v4');
    const dated = structuredClone(v4);
    dated.msg.legacy_id = v4.msg.id;
    dated.msg.id = 'aa1a2193249d0b00f2adbfc6d22e418d';
    for (const c of dated.msg.checkpoints) {
      c.country_region = c.country_iso3;
      c.country_region_name = c.country_name;
      delete c.country_iso3;
      delete c.country_name;
    }
    const ids = (body: unknown) => trackingsOf(parse('aftership', body))[0].checkpoints.map((c) => c.eventId);
    expect(ids(dated)).toEqual(ids(v4));
    expect(ids(v4)[0]).toMatch(/^aftership_[0-9a-f]{40}$/);
    expect(trackingsOf(parse('aftership', dated))[0].providerTrackingId).toBe(v4.msg.id);
  });
});

describe('checkpoint times', () => {
  it("never take the webhook's own send time (EasyPost created_at, AfterShip ts and created_at, Shippo object_created, Ship24 generatedAt)", () => {
    const times = (provider: FeedProvider, body: unknown) =>
      trackingsOf(parse(provider, body))[0].checkpoints.map((c) => resolveCheckpointTime(c.time!, 'US'));
    const easypost = fixtureBody('easypost');
    const aftership = fixtureBody('aftership');
    const shippo = fixtureBody('shippo');
    const ship24 = fixtureBody('ship24');
    const before = [times('easypost', easypost), times('aftership', aftership), times('shippo', shippo), times('ship24', ship24)];
    easypost.created_at = easypost.updated_at = '2030-01-01T00:00:00Z';
    aftership.ts = 1_900_000_000;
    for (const c of aftership.msg.checkpoints) c.created_at = '2030-01-01T00:00:00Z';
    for (const s of shippo.data.tracking_history) s.object_created = s.object_updated = '2030-01-01T00:00:00Z';
    ship24.trackings[0].metadata.generatedAt = '2030-01-01T00:00:00.000Z';
    for (const e of ship24.trackings[0].events) e.datetime = '2030-01-01T00:00:00.000Z';
    expect([times('easypost', easypost), times('aftership', aftership), times('shippo', shippo), times('ship24', ship24)]).toEqual(before);
  });

  it('read a Shippo status_date without an offset as UTC, as Shippo documents it', () => {
    const body = fixtureBody('shippo');
    body.data.tracking_history = [{ ...body.data.tracking_history[0], status_date: '2026-11-10T09:15:00' }];
    const [checkpoint] = trackingsOf(parse('shippo', body))[0].checkpoints;
    expect(checkpoint.time).toEqual({ kind: 'instant', iso: '2026-11-10T09:15:00.000Z', original: '2026-11-10T09:15:00' });
  });

  it("give Ship24's utcOffset precedence over reading a local occurrenceDatetime in a zone", () => {
    const body = fixtureBody('ship24');
    const event = { ...body.trackings[0].events[0], occurrenceDatetime: '2026-11-20T14:05:00', utcOffset: '+05:30' };
    body.trackings[0].events = [event];
    const [checkpoint] = trackingsOf(parse('ship24', body))[0].checkpoints;
    expect(resolveCheckpointTime(checkpoint.time!, 'FR')).toBe('2026-11-20T08:35:00.000Z');
    expect(checkpoint.time!.original).toBe('2026-11-20T14:05:00');
  });

  it('carry the checkpoint country where the body names it (AfterShip alpha-3 as alpha-2)', () => {
    const [local] = trackingsOf(parse('aftership', fixtureBody('aftership')))[0].checkpoints.filter((c) => c.time?.kind === 'local');
    expect(local.time).toMatchObject({ kind: 'local', countryCode: 'DE' });
  });
});

describe('locations', () => {
  it('are plain text of at most 200 characters', () => {
    const body = fixtureBody('ship24');
    body.trackings[0].events[0].location = `PARIS\n${'x'.repeat(300)}\u0085`;
    const [checkpoint] = trackingsOf(parse('ship24', body))[0].checkpoints;
    expect([...checkpoint.location!].length).toBeLessThanOrEqual(200);
    const controls = [...checkpoint.location!].map((ch) => ch.codePointAt(0)!).filter((c) => c <= 0x1f || (c >= 0x7f && c <= 0x9f));
    expect(controls).toEqual([]);
  });
});
