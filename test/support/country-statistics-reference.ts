// The country level as the generic per-level statement computes it (db/transit-statistics.ts
// levelStatistics over every row of the country, and the sums by postal code straight from the
// rows): the statement the country level was read with before it was rewritten over counts. Kept as
// the reference test/db/country-statistics-sql.test.ts compares the rewrite with, and as the
// "before" of bench/transit-statistics.
import { MOMENT_CAP_DAYS, RECENT_DAYS } from '../../domain/prediction-model.js';
import type { Pool } from '../../db/pool.js';
import { AREA_MOMENTS, inLookBack, LEVEL_COLUMNS, levelStatistics, MAX_TRANSIT_DAYS } from '../../db/transit-statistics-sql.js';
import { countryStatisticsOf, type CountryStatistics } from '../../db/transit-statistics.js';

const REFERENCE_COUNTRY_SQL = `
WITH area AS (
  SELECT country_code, postal_code, postal_prefix, issuer_id, dispatch_date, delivered_date, least(business_days, ${MAX_TRANSIT_DAYS}) AS business_days
  FROM transit_history WHERE country_code = ANY ($1::text[]) AND ${inLookBack('$2')}
), levels AS (
  SELECT 'country' AS level, country_code, '' AS key, issuer_id, dispatch_date, delivered_date, business_days FROM area
), ${levelStatistics('$2')}, code_moments AS (
  SELECT country_code, postal_prefix, count(*) AS n, sum(x) AS s, sum(x * x) AS ss
  FROM (SELECT country_code, postal_prefix, postal_code, least(business_days, ${MOMENT_CAP_DAYS}) AS x
        FROM area WHERE dispatch_date <= $2::date - ${RECENT_DAYS}) mature
  GROUP BY country_code, postal_prefix, postal_code
), ${AREA_MOMENTS}
SELECT ${LEVEL_COLUMNS},
  (SELECT coalesce(json_agg(moments), '[]') FROM moments) AS moments`;

/** The reference read of loadCountryStatistics: same arguments, same result. */
export function loadCountryStatisticsReference(
  pool: Pool,
  countries: readonly string[],
  today: string,
): Promise<Map<string, CountryStatistics>> {
  return countryStatisticsOf(pool, REFERENCE_COUNTRY_SQL, countries, today);
}
