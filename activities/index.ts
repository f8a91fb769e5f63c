// Every activity the worker registers, built from the worker's dependencies.
import type { Pool } from '../db/pool.js';
import { createProjectionActivities } from './projection.js';

export interface ActivityDeps {
  pool: Pool;
}

export function createActivities(deps: ActivityDeps) {
  return { ...createProjectionActivities(deps) };
}

export type Activities = ReturnType<typeof createActivities>;
