// The registry of tracking-feed providers (DESIGN §10, docs/tracking-feed-providers.md): the one list the
// inbound route, the feed routes and the dashboard read. Adding a provider is its module beside this
// file, its fixtures in test/fixtures/tracking-feeds/, its name in provider.ts's FEED_PROVIDERS and
// one line here; the ingest path does not change.
import { aftership } from './aftership.js';
import { easypost } from './easypost.js';
import type { FeedProvider, FeedProviderModule } from './provider.js';
import { ship24 } from './ship24.js';
import { shippo } from './shippo.js';

export const FEED_PROVIDER_MODULES: Readonly<Record<FeedProvider, FeedProviderModule>> = { easypost, aftership, shippo, ship24 };

export * from './provider.js';
export { checkpointOccurredAt, resolveCheckpointTime } from './times.js';
