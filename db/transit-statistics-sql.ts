// Tables: transit_history and carrier_conditions (the SQL text of the reads behind a prediction).
// The statements db/transit-statistics.ts runs, and the fragments they are built from (the look-back
// window, the recent period, the weighted level statistics, the area moments), kept apart from the
// code that runs them and parses their rows; test/support/country-statistics-reference.ts builds a
// reference statement from the same fragments.
import { MOMENT_CAP_DAYS, RECENT_DAYS } from '../domain/prediction-model.js';

/** How far back a prediction looks: two years keeps seasonality and drops carriers' old networks. */
export const LOOK_BACK_DAYS = 730;
/** Longer transits are counted as this many business days, so a histogram stays short. */
export const MAX_TRANSIT_DAYS = 60;
/**
 * A live delivery is evidence only if its dispatch was registered at most this many days after its
 * dispatch date (db/transit-history.ts judgeServiceDelivery); a dispatch still on its way counts as
 * one the service knew was sent on the same terms (IN_FLIGHT).
 */
export const PROMPT_REGISTRATION_DAYS = 3;

/**
 * In a level's long-run histograms an issuer's mature deliveries count for at most as many as every
 * other source of the level has together, or this many where the others are fewer
 * (docs/predictions.md "History and its bounds"): what a lone issuer's own deliveries weigh.
 * 100 for a postal code or prefix, twice the code history High asks for; 400 for a country, whose
 * held-out quarter (100) can then calibrate High's 97 % (calibrationSizeFor).
 */
export const ISSUER_WEIGHT_FLOOR = { code: 100, prefix: 100, country: 400 } as const;

/** The history rows of a level in the look-back period ($today is the statement's date parameter). */
export const inLookBack = (today: string) => `dispatch_date >= ${today}::date - ${LOOK_BACK_DAYS} AND delivered_date <= ${today}::date`;

/**
 * Which of an area's recent deliveries count (docs/predictions.md "History and its
 * bounds"): every imported one, and of each issuer's, its latest up to as many as every other
 * source of the area's recent deliveries has together, so no issuer weighs more than half of them
 * however many it records. (If an issuer is cut, every other has at least its count, so the bound
 * holds after the cut too.) Over rows with `partition` columns, `issuer_id`, `delivered_date`,
 * `business_days`, `dispatch_date` and an `is_recent` flag. Ties in the order differ in no counted
 * column, so the statistics do not depend on which of them is kept.
 */
export const countedAsRecent = (partition: string) => `
  is_recent AND (issuer_id IS NULL OR
    count(*) FILTER (WHERE is_recent) OVER (PARTITION BY ${partition}, issuer_id ORDER BY delivered_date DESC, business_days, dispatch_date ROWS UNBOUNDED PRECEDING)
      <= count(*) FILTER (WHERE is_recent) OVER (PARTITION BY ${partition})
       - count(*) FILTER (WHERE is_recent) OVER (PARTITION BY ${partition}, issuer_id))`;

/**
 * An issuer's deliveries of one group (`n` of them, by dispatch day and transit) as they count in a
 * level's long-run histograms (docs/predictions.md "History and its bounds"), over rows of
 * `partition` columns, `issuer_id`, `n` and `floor` that hold a level's mature deliveries by issuer:
 * imported ones in full, and each issuer's in full while it has no more than every other source of
 * the level together (or `floor`, where they are fewer), else scaled down to that many. Computed
 * from the counts, never the rows: the country level's statement must stay a pass of counting
 * (bench/transit-statistics).
 */
const weightedCount = (partition: string) => `
  CASE WHEN issuer_id IS NULL THEN n ELSE
    n * least(1, greatest(sum(n) OVER (PARTITION BY ${partition}) - sum(n) OVER (PARTITION BY ${partition}, issuer_id), floor)
                 / sum(n) OVER (PARTITION BY ${partition}, issuer_id)::numeric) END`;

// From a `levels` CTE (level, country_code, key, issuer_id, dispatch_date, delivered_date,
// business_days), each level's long-run history (dispatches at least RECENT_DAYS old) split by
// dispatch date into the older 75 % (fit) and the newest 25 % (held out for calibration), as
// histograms of business days, each issuer's weighed down to its cap in the level (weightedCount);
// and each level's recent deliveries (dispatches of the last RECENT_DAYS) counted by days since
// dispatch and transit, each issuer's capped (countedAsRecent), with how many of each group came from
// issuers rather than an import (the shift detector's confirmation must hold without any one issuer's
// deliveries, domain/recent-shift.ts): the model reads them for a shift and decides which are mature
// (domain/recent-change.ts). Every step is partitioned by level, so a
// level's numbers do not depend on which other levels the statement reads. The postal code and
// prefix levels are read with it; the country level's statement computes the same from counts, and
// is tested against it.
export const levelStatistics = (today: string) => `
flagged AS (
  SELECT level, country_code, key, issuer_id, dispatch_date, delivered_date, business_days, dispatch_date > ${today}::date - ${RECENT_DAYS} AS is_recent
  FROM levels
), counted AS (
  SELECT level, country_code, key, issuer_id, dispatch_date, business_days, ${countedAsRecent('level, country_code, key')} AS recent
  FROM flagged
), issuer_daily AS (
  SELECT level, country_code, key, issuer_id, dispatch_date, business_days, count(*) AS n,
         CASE level WHEN 'country' THEN ${ISSUER_WEIGHT_FLOOR.country} WHEN 'prefix' THEN ${ISSUER_WEIGHT_FLOOR.prefix} ELSE ${ISSUER_WEIGHT_FLOOR.code} END AS floor
  FROM levels WHERE dispatch_date <= ${today}::date - ${RECENT_DAYS} GROUP BY level, country_code, key, issuer_id, dispatch_date, business_days
), daily AS (
  SELECT level, country_code, key, dispatch_date, business_days, sum(n) AS n
  FROM (SELECT level, country_code, key, dispatch_date, business_days, ${weightedCount('level, country_code, key')} AS n FROM issuer_daily) weighted
  GROUP BY level, country_code, key, dispatch_date, business_days
), ranked AS (
  -- A delivery is held out when more than 75 % of its level's deliveries were dispatched on or
  -- before its day (its cume_dist by dispatch date), counted on the per-day totals: a window over
  -- the rows themselves spilled to disk on a large country.
  SELECT level, country_code, key, business_days, n,
         sum(n) OVER (PARTITION BY level, country_code, key ORDER BY dispatch_date) > 0.75 * sum(n) OVER (PARTITION BY level, country_code, key) AS held_out
  FROM daily
), histograms AS (
  SELECT level, country_code, key, business_days, coalesce(sum(n) FILTER (WHERE NOT held_out), 0) AS fit,
         coalesce(sum(n) FILTER (WHERE held_out), 0) AS calibration
  FROM ranked GROUP BY level, country_code, key, business_days
), recent_groups AS (
  SELECT level, country_code, key, ${today}::date - dispatch_date AS since_days, business_days, count(*) AS n, count(issuer_id) AS by_issuers
  FROM counted WHERE recent GROUP BY level, country_code, key, dispatch_date, business_days
)`;

/** Dispatches that may be on their way, as the in-flight indexes hold them (their WHERE). */
const OPEN_LIVE = `d.status <> 'delivered' AND d.mode = 'live'`;

/**
 * The service's own registrations still on their way, by level and days since dispatch
 * (docs/recent-shifts.md): live dispatches of the recent period,
 * dispatched before today, not delivered, registered at most PROMPT_REGISTRATION_DAYS after their
 * dispatch date (the service knew of them from the start: how many were sent is known). Each
 * issuer's count as `countedAsRecent` bounds its deliveries: with its counted recent deliveries, at
 * most as many as every other source of the level's recent deliveries together (its latest
 * dispatches first), so one issuer's registrations never outweigh the rest of an area's evidence.
 * A dispatch's area is its `area_code` and `area_prefix`, the history's keys of its postal code,
 * stored at registration (db/dispatch-changes.ts). Read through the in-flight indexes (by country,
 * code or prefix, dispatch date). Over a `counted` CTE (levelStatistics) and `code_targets`,
 * `prefix_targets`; $5 today.
 */
const openOf = (level: string, target: string, column: string) => `
  SELECT '${level}' AS level, t.country_code, t.${target} AS key, d.issuer_id, $5::date - (d.dispatch_date AT TIME ZONE 'UTC')::date AS since_days
  FROM ${level}_targets t JOIN dispatches d ON d.country_code = t.country_code::char(2) AND ${column} = t.${target}
  WHERE ${OPEN_LIVE}
    AND d.dispatch_date >= ($5::date - ${RECENT_DAYS - 1})::timestamp AT TIME ZONE 'UTC'
    AND d.dispatch_date < $5::date::timestamp AT TIME ZONE 'UTC'
    AND d.created_at <= d.dispatch_date + ${PROMPT_REGISTRATION_DAYS} * interval '1 day'`;
export const IN_FLIGHT = `
open_levels AS (${openOf('code', 'postal_code', 'd.area_code')}
  UNION ALL${openOf('prefix', 'postal_prefix', 'd.area_prefix')}
), recent_sources AS (
  SELECT level, country_code, key, issuer_id, count(*) AS n FROM counted WHERE recent GROUP BY level, country_code, key, issuer_id
), open_counted AS (
  SELECT o.level, o.country_code, o.key, o.since_days,
         row_number() OVER (PARTITION BY o.level, o.country_code, o.key, o.issuer_id ORDER BY o.since_days)
           <= coalesce((SELECT sum(n) FROM recent_sources r WHERE (r.level, r.country_code, r.key) = (o.level, o.country_code, o.key) AND r.issuer_id IS DISTINCT FROM o.issuer_id), 0)
            - coalesce((SELECT sum(n) FROM recent_sources r WHERE (r.level, r.country_code, r.key) = (o.level, o.country_code, o.key) AND r.issuer_id = o.issuer_id), 0)
           AS counted
  FROM open_levels o
), in_flight AS (
  SELECT level, country_code, key, since_days, count(*) AS n FROM open_counted WHERE counted GROUP BY level, country_code, key, since_days
)`;

export const LEVEL_COLUMNS = `
  (SELECT coalesce(json_agg(json_build_array(level, country_code, key, business_days, fit, calibration)), '[]') FROM histograms) AS histograms,
  (SELECT coalesce(json_agg(json_build_array(level, country_code, key, since_days, business_days, n, by_issuers) ORDER BY level, country_code, key, since_days, business_days), '[]') FROM recent_groups) AS recent`; // prettier-ignore

/**
 * Each country's sums by postal code and prefix over all its areas (AreaMoments, for the shrinkage
 * weights), from a `code_moments` CTE (country_code, postal_prefix, n, s, ss: one row per postal
 * code with mature deliveries, integers, transit capped at MOMENT_CAP_DAYS). The ratios are summed
 * in numeric: a float8 sum depends on the order its rows arrive in, which is the plan's.
 */
export const AREA_MOMENTS = `
prefix_moments AS (
  SELECT country_code, sum(n) AS n, sum(s) AS s, sum(ss) AS ss, sum(s * s / n::numeric) AS code_squares,
         sum(n * n) AS code_weights, count(*) AS codes
  FROM code_moments GROUP BY country_code, postal_prefix
), moments AS (
  SELECT country_code, sum(n) AS deliveries, sum(s) AS sum, sum(ss) AS sum_of_squares, sum(code_squares) AS code_squares,
         sum(s * s / n) AS prefix_squares, sum(code_weights / n) AS code_within_prefix_weights,
         sum(code_weights) AS code_weights, sum(n * n) AS prefix_weights, sum(codes) AS codes, count(*) AS prefixes
  FROM prefix_moments GROUP BY country_code
)`;

// The countries' level ($1: countries, $2: today) and their area moments: what levelStatistics and
// per-code sums over the country's rows give (test/db/country-statistics-sql.test.ts holds it to
// that), but each pass over the rows only counts them, by issuer, dispatch day and business days, and
// by postal code; everything after works on those few thousand counts (the issuers' weights too).
// Row by row, the rows kept for three passes spilled to disk: 0.8 s on 150,000 deliveries
// (bench/transit-statistics). Two plain GROUP BYs rather than GROUPING SETS: the planner hashes
// grouping sets only when it expects every hash table to fit in work_mem, and sorted (on disk) the
// rows of a large country otherwise.
export const COUNTRY_SQL = `
WITH area AS NOT MATERIALIZED (
  SELECT country_code, postal_prefix, postal_code, issuer_id, dispatch_date, delivered_date, least(business_days, ${MAX_TRANSIT_DAYS}) AS business_days
  FROM transit_history WHERE country_code = ANY ($1::text[]) AND ${inLookBack('$2')}
), issuer_daily AS (
  -- Counted by issuer too (a few more groups, the same pass), for the issuers' weights (weightedCount).
  SELECT country_code, issuer_id, dispatch_date, business_days, count(*) AS n, ${ISSUER_WEIGHT_FLOOR.country} AS floor
  FROM area WHERE dispatch_date <= $2::date - ${RECENT_DAYS} GROUP BY country_code, issuer_id, dispatch_date, business_days
), mature_daily AS (
  SELECT country_code, dispatch_date, business_days, sum(n) AS n
  FROM (SELECT country_code, dispatch_date, business_days, ${weightedCount('country_code')} AS n FROM issuer_daily) weighted
  GROUP BY country_code, dispatch_date, business_days
), recent_counted AS (
  -- The recent dispatches with their issuer, through the dispatch-date index, each issuer's capped
  -- (countedAsRecent).
  SELECT country_code, issuer_id, dispatch_date, business_days, ${countedAsRecent('country_code')} AS recent
  FROM (SELECT country_code, issuer_id, dispatch_date, delivered_date, least(business_days, ${MAX_TRANSIT_DAYS}) AS business_days, true AS is_recent
          FROM transit_history
         WHERE country_code = ANY ($1::text[]) AND ${inLookBack('$2')} AND dispatch_date > $2::date - ${RECENT_DAYS}) recent_rows
), recent_groups AS (
  SELECT 'country' AS level, country_code, '' AS key, $2::date - dispatch_date AS since_days, business_days, count(*) AS n,
         count(issuer_id) AS by_issuers
  FROM recent_counted WHERE recent GROUP BY country_code, dispatch_date, business_days
), code_moments AS (
  SELECT country_code, postal_prefix, count(*) AS n, sum(x) AS s, sum(x * x) AS ss
  FROM (SELECT country_code, postal_prefix, postal_code, least(business_days, ${MOMENT_CAP_DAYS}) AS x FROM area WHERE dispatch_date <= $2::date - ${RECENT_DAYS}) mature
  GROUP BY country_code, postal_prefix, postal_code
), ranked AS (
  SELECT country_code, business_days, n,
         sum(n) OVER (PARTITION BY country_code ORDER BY dispatch_date) > 0.75 * sum(n) OVER (PARTITION BY country_code) AS held_out
  FROM mature_daily
), histograms AS (
  SELECT 'country' AS level, country_code, '' AS key, business_days, coalesce(sum(n) FILTER (WHERE NOT held_out), 0) AS fit,
         coalesce(sum(n) FILTER (WHERE held_out), 0) AS calibration
  FROM ranked GROUP BY country_code, business_days
), ${AREA_MOMENTS}
SELECT ${LEVEL_COLUMNS},
  (SELECT coalesce(json_agg(moments), '[]') FROM moments) AS moments`;

// Postal code levels ($1, $2: country and code of each), prefix levels ($3, $4: country and prefix
// of each), each read through its own index range ($5: today), and the operator delays in force in
// the countries $6. A destination's statistics need its code and its prefix; the bulk refresh asks
// only for those it has not read yet in the run (AreaLevelCache).
export const AREA_SQL = `
WITH code_targets AS (
  SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS t (country_code, postal_code)
), prefix_targets AS (
  SELECT DISTINCT * FROM unnest($3::text[], $4::text[]) AS t (country_code, postal_prefix)
), levels AS (
  SELECT 'prefix' AS level, h.country_code, h.postal_prefix AS key, h.issuer_id, h.dispatch_date, h.delivered_date, least(h.business_days, ${MAX_TRANSIT_DAYS}) AS business_days
  FROM transit_history h JOIN prefix_targets t USING (country_code, postal_prefix)
  WHERE ${inLookBack('$5')}
  UNION ALL
  SELECT 'code', h.country_code, h.postal_code, h.issuer_id, h.dispatch_date, h.delivered_date, least(h.business_days, ${MAX_TRANSIT_DAYS})
  FROM transit_history h JOIN code_targets t USING (country_code, postal_code)
  WHERE ${inLookBack('$5')}
), ${levelStatistics('$5')}, ${IN_FLIGHT}
SELECT ${LEVEL_COLUMNS},
  (SELECT coalesce(json_agg(json_build_array(level, country_code, key, since_days, n) ORDER BY level, country_code, key, since_days), '[]') FROM in_flight) AS in_flight,
  (SELECT coalesce(json_agg(json_build_object('country_code', country_code, 'postal_prefix', postal_prefix, 'delay_days', delay_days, 'until', until)), '[]')
     FROM carrier_conditions
    WHERE country_code = ANY ($6::text[]) AND cleared_at IS NULL AND (until IS NULL OR until >= $5::date)) AS delays`;
