// What every dashboard route module receives.
import type { Client } from '@temporalio/client';
import type { SessionLifetime } from '../db/dashboard.js';
import type { Pool } from '../db/pool.js';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import type { CookiePolicy } from './session.js';

export interface DashboardDeps {
  config: Config;
  pool: Pool;
  logger: Logger;
  temporal: Client;
  cookies: CookiePolicy;
  sessionLifetime: SessionLifetime;
}
