// Rows written straight into the transit history as imported ones, for the tests that build an
// area's history again and again (as of each date, for each case of a property): the import's own
// path (db/transit-history.ts copyTransitHistory) tells every listening statistics cache that every
// country changed, which empties the caches other test files are counting reads of
// (test/db/area-statistics-cache.test.ts). Test files that test the import itself use that path.
import type { Pool } from '../../db/pool.js';
import type { TransitRecord } from '../../db/transit-history.js';
import { normalisePostalCode, postalPrefixOf } from '../../domain/prediction-model.js';

/** Writes `rows` as imported deliveries (or as `issuerId`'s service deliveries), without a notification. */
export async function insertHistory(pool: Pool, rows: readonly TransitRecord[], issuerId: string | null = null): Promise<void> {
  if (rows.length === 0) return;
  const codes = rows.map((r) => normalisePostalCode(r.postalCode, r.countryCode));
  await pool.query(
    `INSERT INTO transit_history (postal_code, country_code, postal_prefix, dispatch_date, delivered_date, business_days, source, issuer_id)
     SELECT code, country, prefix, dispatched, delivered, days, CASE WHEN $7::text IS NULL THEN 'import' ELSE 'service' END, $7
       FROM unnest($1::text[], $2::text[], $3::text[], $4::date[], $5::date[], $6::int[]) AS t (code, country, prefix, dispatched, delivered, days)`,
    [
      codes,
      rows.map((r) => r.countryCode),
      rows.map((r, i) => postalPrefixOf(codes[i], r.countryCode)),
      rows.map((r) => r.dispatchDate),
      rows.map((r) => r.deliveredDate),
      rows.map((r) => r.businessDays),
      issuerId,
    ],
  );
}
