// The contract of a tracking-feed provider (docs/tracking-feed-providers.md, DESIGN §10): what one inbound
// aggregator webhook (EasyPost, AfterShip, Shippo, Ship24) must offer the service — its authentication
// on the raw bytes, its body read into trackings and checkpoints, its statuses in the service's
// vocabulary. Each provider is one module beside this file; index.ts is the registry that lists them,
// so adding a provider touches its module, its fixtures and one line there, never the ingest path.
import type { DispatchStatus, ExceptionReason } from '../vocabulary.js';

export const FEED_PROVIDERS = ['easypost', 'aftership', 'shippo', 'ship24'] as const;
export type FeedProvider = (typeof FEED_PROVIDERS)[number];

/** What the inbound request carried, raw: authentication is checked on these bytes before parsing. */
export interface InboundRequest {
  rawBody: Buffer;
  /** Lower-case names, as Node gives them. */
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, string | string[] | undefined>;
}

/**
 * A checkpoint's time as the provider gave it: with an offset (or a UTC field that wins over a local
 * one), or local, needing a zone (`local` is "2026-11-20T14:05:00" or a bare date "2026-11-20").
 * `original` is the provider's string, kept on the carrier event.
 */
export type CheckpointTime =
  { kind: 'instant'; iso: string; original: string } | { kind: 'local'; local: string; countryCode?: string; original: string };

/** The service's status and reason for one provider status (and sub-status). */
export interface MappedCheckpointStatus {
  status: DispatchStatus;
  /** Only for `exception`. */
  reason?: Exclude<ExceptionReason, 'overdue'>;
}

export interface ProviderCheckpoint {
  /** Provider's own id for the checkpoint, or a stable hash of (provider, provider tracking id, time original, status, location). */
  eventId: string;
  /** The service's status and reason (domain/vocabulary.ts), or null: says nothing about where the card is → `ignored`. */
  mapped: MappedCheckpointStatus | null;
  /** The provider's own status / sub-status / message, kept on the carrier event as `original`. */
  original: { vocabulary: FeedProvider; status: string; substatus?: string };
  /**
   * Null when the provider gave no time, where its published types allow that (AfterShip
   * `checkpoint_time?`, Shippo `status_date?`, Ship24 `occurrenceDatetime?`): such a checkpoint is
   * ignored (`mapped` is null too), not refused, since every later webhook would resend it.
   */
  time: CheckpointTime | null;
  /**
   * The time as sent when there was one the service could not read (`time` is then null, the
   * checkpoint ignored with it listed), control characters made spaces, at most 100 characters.
   */
  unreadableTime?: string;
  /** Plain text, ≤ 200 characters. */
  location?: string;
}

export interface ProviderTracking {
  /** As sent (normaliseTrackingNumber for matching). */
  trackingNumber: string;
  /** Normalised slug (lower-case, e.g. "usps", "dhl"). */
  carrier?: string;
  providerTrackingId?: string;
  /**
   * Candidate dispatch ids from the provider's reference fields (AfterShip order_id /
   * custom_fields.dispatch_id, Shippo metadata, Ship24 clientTrackerId / shipmentReference); may be
   * non-UUIDs, the caller filters.
   */
  references: string[];
  checkpoints: ProviderCheckpoint[];
  /**
   * Set when this tracking, inside a body whose envelope is the provider's shape (Ship24's grouped
   * `trackings`), is not: the first failing field (dotted, from the body's root) and `field:
   * problem`. Its checkpoints (one per element of its events list, or one for the whole tracking when
   * there is no list) are then ignored with reason `malformed`, read only as far as they can be (event
   * ids as a well-formed resend will have them), so the other trackings of the body still apply.
   */
  malformed?: { field: string; message: string };
}

export type ParseResult = { ok: true; trackings: ProviderTracking[] } | { ok: false; field: string; message: string };

export interface FeedProviderModule {
  name: FeedProvider;
  /** Secret required at feed creation (EasyPost, AfterShip, Ship24) or a token the service generates (Shippo). */
  secret: 'provider' | 'generated-token';
  /** Constant-time check on the raw bytes, before any parsing. `secret` is the feed's secret (or token). */
  authenticate(request: InboundRequest, secret: string): boolean;
  /** Parses the JSON body (already authenticated) into trackings, or names the failing field. */
  parse(body: unknown): ParseResult;
  /** Where the issuer pastes the URL, in the provider's own words (for the dashboard and docs). */
  setupHint: string;
}

/**
 * A tracking number as matching compares it: upper-case, no whitespace and no control characters (a
 * registered one has none; a provider's might, and Postgres text cannot hold U+0000).
 */
export function normaliseTrackingNumber(s: string): string {
  return s.replace(NOT_IN_TRACKING_NUMBERS, '').toUpperCase();
}

const WHITESPACE_AND_CONTROLS = '[\\s\\u0000-\\u001f\\u007f-\\u009f]+';
const NOT_IN_TRACKING_NUMBERS = new RegExp(WHITESPACE_AND_CONTROLS, 'gu');

/** A carrier name or code as a slug: lower-case, runs of anything but letters and digits become one `-`. */
export function normaliseCarrier(s: string): string {
  return s
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/**
 * Whether two carrier names may be the same carrier, for matching a tracking to a dispatch (DESIGN
 * §10 "Matching"): each provider has its own codes (EasyPost "DHLExpress", AfterShip "dhl", Ship24
 * "us-post") and an issuer writes its own ("DHL", "USPS"), so two names disagree only when neither,
 * without separators, begins the other and no alias joins them. Absent on either side = agree.
 */
export function carriersAgree(a: string | null | undefined, b: string | null | undefined): boolean {
  if (!a || !b) return true;
  const [x, y] = [carrierKey(a), carrierKey(b)];
  return x === '' || y === '' || x.startsWith(y) || y.startsWith(x);
}

/**
 * Names that share no prefix with the carrier's usual name, by the providers' codes and the longer
 * names issuers write (lower-case, no separators): a name that begins with one is that carrier ("US
 * Postal Service" begins with `uspost`, "Deutsche Post DHL" with `deutschepost`).
 */
const CARRIER_ALIASES: Record<string, string> = {
  uspost: 'usps',
  unitedstatespostalservice: 'usps',
  parcelforce: 'royalmail',
  deutschepost: 'dhl',
  colissimo: 'laposte',
  frpost: 'laposte',
  postescanada: 'canadapost',
  federalexpress: 'fedex',
  unitedparcelservice: 'ups',
};

const ALIAS_PREFIXES = Object.keys(CARRIER_ALIASES);

function carrierKey(name: string): string {
  const compact = normaliseCarrier(name).replace(/-/g, '');
  const alias = ALIAS_PREFIXES.find((prefix) => compact.startsWith(prefix));
  return alias === undefined ? compact : CARRIER_ALIASES[alias];
}
