// The providers' status tables (domain/tracking-feeds/*.ts, DESIGN §10 "Checkpoints become carrier
// events") cover every status their SDKs' published types list (read from the installed packages'
// .d.ts files, so an SDK that adds a status fails this test until the table says what it means), map
// only to the service's statuses and reasons (a reason only with `exception`), ignore the statuses
// that say nothing about where the card is, and ignore, rather than refuse, a status they do not know.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VOCABULARY_TABLE } from '../../../domain/carrier-vocabularies.js';
import { AFTERSHIP_EXCEPTION_SUBTAGS, AFTERSHIP_TAG_TABLE, mapAfterShipTag } from '../../../domain/tracking-feeds/aftership.js';
import { EASYPOST_DETAIL_REASONS, mapEasyPostStatus } from '../../../domain/tracking-feeds/easypost.js';
import type { MappedCheckpointStatus } from '../../../domain/tracking-feeds/provider.js';
import {
  mapShip24Milestone,
  SHIP24_EXCEPTION_REASONS,
  SHIP24_MILESTONE_TABLE,
  SHIP24_MILESTONES,
  SHIP24_STATUS_CODES,
} from '../../../domain/tracking-feeds/ship24.js';
import { mapShippoStatus, SHIPPO_SUBSTATUSES, SHIPPO_TABLE } from '../../../domain/tracking-feeds/shippo.js';
import { DISPATCH_STATUSES, EXCEPTION_REASONS } from '../../../domain/vocabulary.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const sdkFile = (path: string) => readFileSync(join(root, 'node_modules', path), 'utf8');
/** The string literals of a .d.ts union or enum, as the SDK publishes them. */
const literals = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].map((m) => m[1]).sort();

const sorted = (keys: string[]) => [...keys].sort();

function expectValidMapping(mapped: MappedCheckpointStatus | null) {
  if (mapped === null) return;
  expect(DISPATCH_STATUSES).toContain(mapped.status);
  if (mapped.status === 'exception') expect(EXCEPTION_REASONS).toContain(mapped.reason);
  else expect(mapped.reason).toBeUndefined();
}

describe('EasyPost status table', () => {
  it('covers every status and status_detail of @easypost/api (types/Tracker/TrackerStatus.d.ts, TrackerStatusDetail.d.ts)', () => {
    const statuses = literals(sdkFile('@easypost/api/types/Tracker/TrackerStatus.d.ts'), /'([a-z_]+)'/g);
    const details = literals(sdkFile('@easypost/api/types/Tracker/TrackerStatusDetail.d.ts'), /'([a-z_]+)'/g);
    expect(statuses.length).toBeGreaterThanOrEqual(10);
    expect(sorted(Object.keys(VOCABULARY_TABLE.easypost))).toEqual(statuses);
    expect(sorted(Object.keys(EASYPOST_DETAIL_REASONS))).toEqual(details);
    for (const status of statuses) for (const detail of details) expectValidMapping(mapEasyPostStatus(status, detail));
  });

  it('ignores unknown and error, and names the reason of a failure from its status_detail', () => {
    expect(mapEasyPostStatus('unknown', 'status_update')).toBeNull();
    expect(mapEasyPostStatus('error', null)).toBeNull();
    expect(mapEasyPostStatus('failure', 'lost')).toEqual({ status: 'exception', reason: 'lost' });
    expect(mapEasyPostStatus('failure', 'unknown')).toEqual({ status: 'exception', reason: 'other' });
    expect(mapEasyPostStatus('return_to_sender', 'lost')).toEqual({ status: 'exception', reason: 'returned' });
    expect(mapEasyPostStatus('in_transit', 'weather_delay')).toEqual({ status: 'in_transit' });
  });
});

describe('AfterShip status table', () => {
  it('covers every tag of @aftership/tracking-sdk (dist/model/Tag.d.ts)', () => {
    const tags = literals(sdkFile('@aftership/tracking-sdk/dist/model/Tag.d.ts'), /= "([A-Za-z]+)"/g);
    expect(tags.length).toBeGreaterThanOrEqual(9);
    expect(sorted(Object.keys(AFTERSHIP_TAG_TABLE))).toEqual(tags);
    for (const tag of tags)
      for (const subtag of [undefined, ...Object.keys(AFTERSHIP_EXCEPTION_SUBTAGS)]) expectValidMapping(mapAfterShipTag(tag, subtag));
  });

  it('ignores Pending, InfoReceived and Expired, and names the reason of an Exception from its subtag', () => {
    for (const tag of ['Pending', 'InfoReceived', 'Expired']) expect(mapAfterShipTag(tag, `${tag}_001`)).toBeNull();
    expect(mapAfterShipTag('Exception', 'Exception_013')).toEqual({ status: 'exception', reason: 'lost' });
    expect(mapAfterShipTag('Exception', 'Exception_099')).toEqual({ status: 'exception', reason: 'other' });
    expect(mapAfterShipTag('AttemptFail', 'AttemptFail_001')).toEqual({ status: 'exception', reason: 'failed_attempt' });
  });
});

describe('Shippo status table', () => {
  it('covers every status of shippo (models/components/trackingstatusenum.d.ts)', () => {
    const statuses = literals(sdkFile('shippo/models/components/trackingstatusenum.d.ts'), /readonly \w+: "([A-Z_]+)"/g);
    expect(statuses.length).toBeGreaterThanOrEqual(6);
    expect(sorted(Object.keys(SHIPPO_TABLE))).toEqual(statuses);
    for (const row of Object.values(SHIPPO_TABLE))
      for (const code of Object.keys(row.substatus ?? {})) expect(SHIPPO_SUBSTATUSES).toContain(code);
    for (const status of statuses) for (const code of [undefined, ...SHIPPO_SUBSTATUSES]) expectValidMapping(mapShippoStatus(status, code));
  });

  it('ignores UNKNOWN, and reads a failed delivery within TRANSIT as a failed attempt', () => {
    expect(mapShippoStatus('UNKNOWN', 'other')).toBeNull();
    expect(mapShippoStatus('TRANSIT', 'delivery_attempted')).toEqual({ status: 'exception', reason: 'failed_attempt' });
    expect(mapShippoStatus('TRANSIT', 'delayed')).toEqual({ status: 'in_transit' });
    expect(mapShippoStatus('FAILURE', 'package_lost')).toEqual({ status: 'exception', reason: 'lost' });
    expect(mapShippoStatus('RETURNED', 'return_to_sender')).toEqual({ status: 'exception', reason: 'returned' });
  });
});

describe('Ship24 status table', () => {
  it("covers every statusMilestone of Ship24's status list, and its reasons name only its statusCodes", () => {
    expect(sorted(Object.keys(SHIP24_MILESTONE_TABLE))).toEqual(sorted([...SHIP24_MILESTONES]));
    for (const code of Object.keys(SHIP24_EXCEPTION_REASONS)) expect(SHIP24_STATUS_CODES).toContain(code);
    for (const milestone of SHIP24_MILESTONES)
      for (const code of [null, ...SHIP24_STATUS_CODES]) expectValidMapping(mapShip24Milestone(milestone, code));
  });

  it('ignores pending and info_received, and names the reason of an exception from its statusCode', () => {
    expect(mapShip24Milestone('pending', null)).toBeNull();
    expect(mapShip24Milestone('info_received', 'data_order_created')).toBeNull();
    expect(mapShip24Milestone('exception', 'exception_return')).toEqual({ status: 'exception', reason: 'returned' });
    expect(mapShip24Milestone('exception', null)).toEqual({ status: 'exception', reason: 'other' });
  });
});

describe('a status a table does not know', () => {
  it('is ignored, not refused, by every provider (the provider would retry a refused body for days)', () => {
    expect(mapEasyPostStatus('teleported', null)).toBeNull();
    expect(mapAfterShipTag('Teleported', null)).toBeNull();
    expect(mapShippoStatus('TELEPORTED', null)).toBeNull();
    expect(mapShip24Milestone('teleported', null)).toBeNull();
  });
});
