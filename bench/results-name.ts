// Where a benchmark writes its results: a second run on the same day is kept beside the first
// (`2026-11-22-2`), never over it, so a committed result is not lost to a trial run.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';

/**
 * The first of `base`, `base-2`, `base-3`, … with no `.md` or `.json` in `dir` (created if need be);
 * `explicit` (a name the operator gave, e.g. BENCH_RESULTS_NAME) as it is.
 */
export function freeResultsName(dir: string, base: string, explicit?: string): string {
  mkdirSync(dir, { recursive: true });
  if (explicit) return explicit;
  const taken = (name: string) => existsSync(path.join(dir, `${name}.md`)) || existsSync(path.join(dir, `${name}.json`));
  let name = base;
  for (let run = 2; taken(name); run += 1) name = `${base}-${run}`;
  return name;
}
