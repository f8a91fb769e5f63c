// Tables: none of its own (a per-process cache over db/transit-statistics.ts, emptied by NOTIFY).
// What a prediction reads on every carrier event besides the country level: the destination's
// postal code and prefix levels and the operator delays in force (one statement,
// db/transit-statistics.ts loadAreaLevels). They change only when the transit history or the
// carrier conditions do, and every writer of those says so on the channel `transit_statistics`
// (notifyTransitStatisticsChanged: history import, a service delivery, conditions set or cleared),
// naming the country when one alone changed. The worker's cache listens on its own connection and
// forgets that country's areas (or everything) at each notification,
// so a change reaches the next prediction within the notification's delivery (milliseconds), as
// the per-read design promised ("at once"). While it is not listening (not started, or its
// connection lost and not yet back), it reads every time, as if it were not there.
import pg from 'pg';
import { LRUCache } from 'lru-cache';
import type { Pool } from './pool.js';
import { loadAreaLevels, type AreaLevels, type AreaRequest, type AreaStatisticsSource } from './transit-statistics.js';

export const TRANSIT_STATISTICS_CHANNEL = 'transit_statistics';
/** Destinations held per country: a bounded share of memory, far above the areas one day's events touch. */
const HELD_PER_COUNTRY = 20_000;
const RECONNECT_MS = 1_000;

/**
 * Tells every listening worker that the transit history or the carrier conditions of `country`
 * (every country when absent) changed; delivered when the caller's transaction commits.
 */
export async function notifyTransitStatisticsChanged(db: Pick<Pool, 'query'>, country?: string): Promise<void> {
  await db.query(`SELECT pg_notify('${TRANSIT_STATISTICS_CHANNEL}', $1)`, [country?.toUpperCase() ?? '']);
}

export class AreaStatisticsCache {
  /** Per country (upper case), the areas read, keyed by day and request. */
  private readonly held = new Map<string, LRUCache<string, AreaLevels>>();
  /** Moves at each notification: a read that began before one is not held. */
  private generation = 0;
  private client?: pg.Client;
  private listening = false;
  private stopped = false;
  private reconnect?: NodeJS.Timeout;

  constructor(
    private readonly pool: Pool,
    private readonly connectionString: string,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /** Starts listening; until it listens, every read goes to the database. */
  async start(): Promise<void> {
    this.stopped = false;
    const client = new pg.Client({ connectionString: this.connectionString, application_name: 'area-statistics-listener' });
    client.on('notification', (message) => this.forget(message.payload || undefined));
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${TRANSIT_STATISTICS_CHANNEL}`);
    } catch (error) {
      this.lost(client, error);
      return;
    }
    // Anything changed before LISTEN took effect is not in the (empty) cache either.
    this.forget();
    this.client = client;
    this.listening = true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnect);
    this.listening = false;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  /** Whether reads are being held (for tests and the worker's start-up log). */
  get isListening(): boolean {
    return this.listening;
  }

  readonly source: AreaStatisticsSource = async (request: AreaRequest, today: string) => {
    const countries = new Set(request.countries);
    if (!this.listening || countries.size !== 1) return loadAreaLevels(this.pool, request, today);
    const [country] = countries;
    const key = `${today} ${JSON.stringify(request)}`;
    const held = this.held.get(country)?.get(key);
    if (held) return held;
    const generation = this.generation;
    const read = await loadAreaLevels(this.pool, request, today);
    if (generation === this.generation && this.listening) {
      let areas = this.held.get(country);
      if (!areas) this.held.set(country, (areas = new LRUCache({ max: HELD_PER_COUNTRY })));
      areas.set(key, read);
    }
    return read;
  };

  /** Forgets one country's areas, or every country's. */
  private forget(country?: string): void {
    this.generation += 1;
    if (country === undefined) this.held.clear();
    else this.held.delete(country);
  }

  private lost(client: pg.Client, error?: unknown): void {
    if (this.client !== client && this.client !== undefined) return;
    this.listening = false;
    this.client = undefined;
    this.forget();
    if (error) this.onError(error);
    void client.end().catch(() => {});
    if (!this.stopped && !this.reconnect) {
      this.reconnect = setTimeout(() => {
        this.reconnect = undefined;
        if (!this.stopped) void this.start();
      }, RECONNECT_MS);
      this.reconnect.unref();
    }
  }
}
