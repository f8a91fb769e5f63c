// The two versions of the service the event-cost benchmark compares: a source tree for each, from
// which that version's own API, worker, admin CLI, migrations and dev-server settings are run.
// "previous main" is a detached `git worktree` of BENCH_BASELINE_REF outside the repository; "new" is
// BENCH_NEW_DIR (this checkout by default) or a worktree of BENCH_NEW_REF. A worktree reuses this
// checkout's node_modules through a symlink (the lock file must be the same; the run says when not).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface VersionTree {
  /** 'previous main' or 'new'. */
  label: string;
  /** The folder the version's processes start in. */
  dir: string;
  /** What was asked for: a ref, or the folder. */
  source: string;
  commit: string;
  /** Files changed against `commit` in that folder (a working tree mid-change); 0 for a worktree. */
  uncommittedFiles: number;
  /** Whether its package-lock.json differs from the one whose node_modules it uses. */
  lockFileDiffers: boolean;
  remove(): void;
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** A detached worktree of `ref` in a fresh folder of the OS temp dir, with `repoRoot`'s node_modules linked in. */
export function worktreeOf(repoRoot: string, ref: string, label: string): VersionTree {
  const parent = mkdtempSync(path.join(os.tmpdir(), 'cds-bench-event-cost-tree-'));
  const dir = path.join(parent, 'tree');
  git(repoRoot, 'worktree', 'add', '--detach', dir, ref);
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return {
    label,
    dir,
    source: ref,
    commit: git(dir, 'rev-parse', 'HEAD'),
    uncommittedFiles: 0,
    lockFileDiffers: lockFile(dir) !== lockFile(repoRoot),
    remove: () => {
      try {
        git(repoRoot, 'worktree', 'remove', '--force', dir);
      } catch {
        // already gone, or git refused: the folder goes below and `git worktree prune` forgets it
      }
      rmSync(parent, { recursive: true, force: true });
      try {
        git(repoRoot, 'worktree', 'prune');
      } catch {
        // nothing to prune
      }
    },
  };
}

/** A folder used as it is (this checkout's working tree, changes included). */
export function folderTree(dir: string, repoRoot: string, label: string): VersionTree {
  const status = git(dir, 'status', '--porcelain', '--untracked-files=all');
  return {
    label,
    dir,
    source: dir,
    commit: git(dir, 'rev-parse', 'HEAD'),
    uncommittedFiles: status ? status.split('\n').length : 0,
    lockFileDiffers: lockFile(dir) !== lockFile(repoRoot),
    remove: () => {},
  };
}

function lockFile(dir: string): string {
  const file = path.join(dir, 'package-lock.json');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}
