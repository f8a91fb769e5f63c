// Tables: carrier_conditions (read for predictions by db/transit-statistics.ts).
// Carrier conditions an operator declares (`conditions set|list|clear`, docs/admin-cli.md "Operator CLI"): a delay in
// business days for a country or one postal prefix of it, optionally until a date. Cleared
// conditions are kept (cleared_at) so what the model knew at a given time can be reconstructed.
import { notifyTransitStatisticsChanged } from './area-statistics-cache.js';
import { randomBytes } from 'node:crypto';
import type { Pool } from './pool.js';

export interface CarrierCondition {
  id: string;
  countryCode: string;
  postalPrefix: string | null;
  delayDays: number;
  /** Last day the delay applies (YYYY-MM-DD, inclusive); null: until cleared. */
  until: string | null;
  createdAt: Date;
  clearedAt: Date | null;
}

interface ConditionRow {
  id: string;
  country_code: string;
  postal_prefix: string | null;
  delay_days: number;
  until: string | null;
  created_at: Date;
  cleared_at: Date | null;
}

const COLUMNS = 'id, country_code, postal_prefix, delay_days, until, created_at, cleared_at';

function fromRow(row: ConditionRow): CarrierCondition {
  return {
    id: row.id,
    countryCode: row.country_code,
    postalPrefix: row.postal_prefix,
    delayDays: row.delay_days,
    until: row.until,
    createdAt: row.created_at,
    clearedAt: row.cleared_at,
  };
}

export async function setCarrierCondition(
  pool: Pool,
  input: { countryCode: string; postalPrefix: string | null; delayDays: number; until: string | null },
): Promise<CarrierCondition> {
  const id = `cnd_${randomBytes(8).toString('hex')}`;
  const { rows } = await pool.query<ConditionRow>(
    `INSERT INTO carrier_conditions (id, country_code, postal_prefix, delay_days, until) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
    [id, input.countryCode, input.postalPrefix, input.delayDays, input.until],
  );
  await notifyTransitStatisticsChanged(pool, input.countryCode);
  return fromRow(rows[0]);
}

/** Conditions not cleared, newest first; with `includeCleared`, all of them. */
export async function listCarrierConditions(pool: Pool, options: { includeCleared?: boolean } = {}): Promise<CarrierCondition[]> {
  const where = options.includeCleared ? '' : 'WHERE cleared_at IS NULL';
  const { rows } = await pool.query<ConditionRow>(`SELECT ${COLUMNS} FROM carrier_conditions ${where} ORDER BY created_at DESC, id`);
  return rows.map(fromRow);
}

/** Clears one condition by id, or every condition of a country; returns those it cleared. */
export async function clearCarrierConditions(pool: Pool, target: { id: string } | { countryCode: string }): Promise<CarrierCondition[]> {
  const [column, value] = 'id' in target ? ['id', target.id] : ['country_code', target.countryCode];
  const { rows } = await pool.query<ConditionRow>(
    `UPDATE carrier_conditions SET cleared_at = now() WHERE ${column} = $1 AND cleared_at IS NULL RETURNING ${COLUMNS}`,
    [value],
  );
  for (const country of new Set(rows.map((row) => row.country_code))) await notifyTransitStatisticsChanged(pool, country);
  return rows.map(fromRow);
}
