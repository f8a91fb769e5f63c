// The service's own registrations in a family network (README.md "A family of networks", issue 29):
// the issuer went live the day its history was exported, so the cards it dispatched since were
// registered as they left (family.ts serviceRegistrations). Those delivered by yesterday join the
// transit history as the service's own deliveries, with the issuer (as db/transit-history.ts
// judgeServiceDelivery records a prompt, plausible delivery) once the carrier has reported them
// (the same day, or a day or two later); the others are live dispatches in transit, as the
// registration's projection leaves them. The prediction's statistics
// (db/transit-statistics.ts) then read both, as they would in production.
import { randomUUID } from 'node:crypto';
import { toTransitRecord } from '../../cli/admin/history-commands.js';
import type { Pool } from '../../db/pool.js';
import { normalisePostalCode, postalPrefixOf } from '../../domain/prediction-model.js';
import { serviceRegistrations, type FamilyDelivery, type FamilyNetwork } from './family.js';
import type { Random } from './family.js';

const dayAfter = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
const iso = (d: FamilyDelivery) => `${d.dispatchDate}T${String(d.hour).padStart(2, '0')}:00:00Z`;

/** Writes the registrations since the export; returns how many were delivered and how many are on their way. */
export async function registerSinceExport(
  pool: Pool,
  network: FamilyNetwork,
  historyDays: number,
  issuerId: string,
  random: Random,
): Promise<{ delivered: number; onTheirWay: number }> {
  const delivered: Array<{ code: string; country: string; prefix: string; dispatched: string; deliveredDate: string; days: number }> = [];
  const open: FamilyDelivery[] = [];
  for (const card of serviceRegistrations(network, historyDays, random)) {
    // The carrier reports a delivery the day it happens (75 %), the next day (20 %) or the one after:
    // until then the service has the card on its way.
    const draw = random();
    const reported = dayAfter(card.deliveredDate, draw < 0.75 ? 0 : draw < 0.95 ? 1 : 2);
    if (reported >= network.today) {
      open.push(card);
      continue;
    }
    const record = toTransitRecord({ postal_code: card.area.postalCode, country_code: card.area.countryCode, dispatch_date: iso(card), delivered_date: card.deliveredDate }); // prettier-ignore
    if ('reason' in record) continue;
    const code = normalisePostalCode(record.postalCode, record.countryCode);
    delivered.push({ code, country: record.countryCode, prefix: postalPrefixOf(code, record.countryCode), dispatched: record.dispatchDate, deliveredDate: record.deliveredDate, days: record.businessDays }); // prettier-ignore
  }
  if (delivered.length > 0)
    await pool.query(
      `INSERT INTO transit_history (postal_code, country_code, postal_prefix, dispatch_date, delivered_date, business_days, source, issuer_id)
       SELECT code, country, prefix, dispatched, delivered, days, 'service', $7
         FROM unnest($1::text[], $2::text[], $3::text[], $4::date[], $5::date[], $6::int[]) AS t (code, country, prefix, dispatched, delivered, days)`,
      [
        delivered.map((d) => d.code),
        delivered.map((d) => d.country),
        delivered.map((d) => d.prefix),
        delivered.map((d) => d.dispatched),
        delivered.map((d) => d.deliveredDate),
        delivered.map((d) => d.days),
        issuerId,
      ],
    );
  if (open.length > 0)
    await pool.query(
      `INSERT INTO dispatches (id, issuer_id, mode, version, status, dispatch_date, postal_code, country_code, registration,
                               window_min, window_max, confidence_level, record, created_at, area_code, area_prefix)
       SELECT id, $1, 'live', 1, 'in_transit', dispatched, code, country, '{}', dispatched::date, dispatched::date, 'Low', '{}',
              dispatched + interval '5 minutes', area_code, area_prefix
         FROM unnest($2::uuid[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::text[])
           AS t (id, dispatched, code, country, area_code, area_prefix)`,
      [
        issuerId,
        open.map(() => randomUUID()),
        open.map(iso),
        open.map((c) => c.area.postalCode),
        open.map((c) => c.area.countryCode),
        // The history's keys of the code, as a registration stores them (db/dispatch-changes.ts).
        open.map((c) => normalisePostalCode(c.area.postalCode, c.area.countryCode)),
        open.map((c) => postalPrefixOf(c.area.postalCode, c.area.countryCode)),
      ],
    );
  return { delivered: delivered.length, onTheirWay: open.length };
}
