// The runbook (docs/runbook.md) maps every alert of deploy/prometheus/alerts.yaml to its action,
// and every page of docs/ names real things: every `npm run admin -- …` line is a command,
// subcommand and flags of the operator CLI as cli/admin/ defines them (commander, built here exactly
// as cli/admin.ts builds it, without running anything) and every command and flag of it is in the
// table of docs/admin-cli.md, every `cds_*` metric is served by the
// service's /metrics (the prom-client registry of platform/metrics.ts), every `temporal_*` one is a
// Temporal SDK worker metric (checked against the SDK's native core), and the workflow patch ids and
// recorded history generations are those of the code. Links and cited files are checked for every
// page in test/docs/links.unit.test.ts; the rule file itself (structure, PromQL, the metrics the
// expressions read) in test/deploy/alerts.unit.test.ts.
import { describe, expect, it } from '@jest/globals';
import { Command } from 'commander';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { HISTORIES_DIR } from '../support/histories.js';
import { isSdkMetric, SDK_METRICS, sdkCoreText, servedServiceMetrics } from '../support/metric-names.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const runbook = read('docs/runbook.md');
/** Every page of docs/, and the README: where operators read commands and metric names. */
const pages = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const allDocs = pages.map(read).join('\n');

/** The admin program with every command group of cli/admin/, as cli/admin.ts registers them. */
async function adminProgram(): Promise<{ program: Command; registered: string[] }> {
  const program = new Command('admin').option('--json').exitOverride();
  const registered: string[] = [];
  for (const file of readdirSync(path.join(ROOT, 'cli/admin'))
    .filter((f) => f.endsWith('-commands.ts'))
    .sort()) {
    const module = (await import(path.join(ROOT, 'cli/admin', file))) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module)) {
      if (/^register\w+Commands$/.test(name) && typeof value === 'function') {
        (value as (program: Command) => void)(program);
        registered.push(name);
      }
    }
  }
  return { program, registered: registered.sort() };
}

/** The problems of one `npm run admin -- <args>` line: unknown command, subcommand or flag. */
function commandProblems(program: Command, args: string): string[] {
  const tokens = args.trim().split(/\s+/);
  const globalFlags = new Set(program.options.map((o) => o.long));
  while (tokens[0] !== undefined && globalFlags.has(tokens[0])) tokens.shift();
  const group = program.commands.find((c) => c.name() === tokens[0]);
  if (!group) return [`unknown command "${tokens[0]}"`];
  const command = group.commands.find((c) => c.name() === tokens[1]);
  if (!command) return [`unknown subcommand "${tokens[0]} ${tokens[1]}"`];
  const flags = new Set([...command.options.map((o) => o.long), ...globalFlags]);
  return tokens
    .slice(2)
    .filter((token) => token.startsWith('--'))
    .map((token) => token.split('=')[0])
    .filter((flag) => !flags.has(flag))
    .map((flag) => `"${tokens[0]} ${tokens[1]}" has no flag ${flag}`);
}

/** Every `npm run admin -- …` (or `npm run -s admin -- …`) in a text, up to the end of its line or code span. */
function adminLines(text: string): string[] {
  return [...text.matchAll(/npm run (?:-s )?admin -- ([^`\n]+)/g)].map((m) => m[1].trim()).filter((line) => line !== '<command>');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

/** The headings of the runbook: where the alerts may point. */
const runbookAnchors = new Set([...runbook.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1])));

interface Rule {
  alert?: string;
  expr?: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const alerts = parse(read('deploy/prometheus/alerts.yaml')) as { groups: Array<{ name: string; rules: Rule[] }> };
const rules = alerts.groups.flatMap((g) => g.rules);

describe('the runbook, docs/runbook.md', () => {
  it('has a section for every page-worthy symptom, and the routine work in docs/maintenance.md', () => {
    expect(runbook.length).toBeGreaterThan(20_000);
    const sections = [...runbook.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(sections).toEqual(
      expect.arrayContaining([
        'Alerts',
        'Temporal unreachable',
        'Postgres unreachable',
        'A worker stuck, or a deploy draining',
        'Undeliverable spike',
        'A consumer endpoint down',
        'Pending deliveries ageing',
        'A dispatch wedged',
        'A leaked API key',
      ]),
    );
    const routine = [...read('docs/maintenance.md').matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(routine).toEqual(
      expect.arrayContaining(['Scaling workers', 'Rotating a webhook secret', 'Upgrading the workflow code safely', 'Backups and restore']),
    );
  });

  it('is the one runbook: docs/operations.md no longer holds one, and nothing links to it there', () => {
    expect(read('docs/operations.md')).not.toMatch(/^## Runbook$/m);
    const files = ['README.md', 'deploy/README.md', 'deploy/prometheus/alerts.yaml', 'deploy/helm/card-delivery/values.yaml', ...pages];
    expect(files.filter((file) => read(file).includes('operations.md#runbook'))).toEqual([]);
  });

  it('names only test files, history files and workflow patch ids that exist, in every page', () => {
    const testFiles = [...new Set(allDocs.match(/\btest\/[\w./-]+\.ts\b/g) ?? [])];
    expect(testFiles.length).toBeGreaterThan(3);
    expect(testFiles.filter((file) => !existsSync(path.join(ROOT, file)))).toEqual([]);
    const maintenance = read('docs/maintenance.md');
    const patchIds = [...read('workflows/dispatch.ts').matchAll(/^const \w+ = '([a-z-]+)';$/gm)].map((m) => m[1]);
    expect(patchIds.filter((id) => !maintenance.includes(`\`${id}\``))).toEqual([]);
    const generations = new Set(
      readdirSync(HISTORIES_DIR)
        .map((f) => f.match(/-(before-[a-z-]+)\.json$/)?.[1])
        .filter(Boolean),
    );
    expect([...generations].filter((generation) => !maintenance.includes(`-${generation}`))).toEqual([]);
  });

  it('builds the admin program from the same command groups as cli/admin.ts', async () => {
    const { registered } = await adminProgram();
    const inAdmin = [...read('cli/admin.ts').matchAll(/^(register\w+Commands)\(program\);$/gm)].map((m) => m[1]).sort();
    expect(registered).toEqual(inAdmin);
  });

  it('finds a wrong command, subcommand or flag (the check itself)', async () => {
    const { program } = await adminProgram();
    expect(commandProblems(program, 'deliveries list --undeliverable --json')).toEqual([]);
    expect(commandProblems(program, 'deliveries purge')).toEqual(['unknown subcommand "deliveries purge"']);
    expect(commandProblems(program, 'key revoke --id key_1')).toEqual(['"key revoke" has no flag --id']);
    expect(commandProblems(program, 'endpoint list')).toEqual(['unknown command "endpoint"']);
  });

  it('names only admin commands, subcommands and flags that exist, in every page', async () => {
    const { program } = await adminProgram();
    const lines = adminLines(allDocs);
    expect(lines.length).toBeGreaterThan(10);
    expect(lines.flatMap((line) => commandProblems(program, line).map((problem) => `${line}: ${problem}`))).toEqual([]);
  });

  it('documents every admin command and every one of its flags in the table of docs/admin-cli.md', async () => {
    const { program } = await adminProgram();
    // The table's rows, one a line: a command is documented by the rows that name it in a code span.
    const rows = read('docs/admin-cli.md')
      .split('\n')
      .filter((line) => line.startsWith('| `'));
    const missing = program.commands.flatMap((group) =>
      group.commands.flatMap((command) => {
        const name = `${group.name()} ${command.name()}`;
        const own = rows.filter((row) => row.includes(`\`${name}\``) || row.includes(`\`${name} `));
        if (own.length === 0) return [`${name}: no row`];
        return command.options
          .map((option) => option.long!)
          .filter((flag) => !own.some((row) => row.includes(flag)))
          .map((flag) => `${name}: ${flag}`);
      }),
    );
    expect(missing).toEqual([]);
  });

  it('has every operator command DESIGN.md names, spelled and flagged exactly as there, each listed by --help', async () => {
    const { program } = await adminProgram();
    // DESIGN.md §4, §6 (--allow-errors), §3 "The published accuracy" and §11, optional parts unbracketed.
    const design = [
      'issuer create --name NAME',
      'key create --issuer ID --scopes a,b --test',
      'key revoke --key-id ID',
      'user create --issuer ID --email E',
      'webhook add --issuer ID --url URL --events e1,e2',
      'webhook list',
      'webhook remove --id ID',
      'history import FILE.csv --allow-errors',
      'conditions set --country CC --postal-prefix P --delay-days N',
      'deliveries list --undeliverable --json',
      'deliveries replay --event-id ID',
      'predictions quality',
      'retention run --json',
      'dispatch erase --id ID',
      'issuer erase --issuer ID --confirm',
      'dispatch footprint --id ID --json',
    ];
    expect(design.flatMap((line) => commandProblems(program, line).map((problem) => `${line}: ${problem}`))).toEqual([]);
    const unlisted = design.flatMap((line) => {
      const [group, name, ...rest] = line.split(' ');
      const command = program.commands.find((c) => c.name() === group)!;
      const help = command.commands.find((c) => c.name() === name)!.helpInformation();
      const flags = rest.filter((token) => token.startsWith('--') && token !== '--json');
      return [
        ...(command.helpInformation().includes(`  ${name} `) ? [] : [`${group} --help lacks ${name}`]),
        ...flags.filter((flag) => !help.includes(flag)).map((flag) => `${group} ${name} --help lacks ${flag}`),
      ];
    });
    expect(unlisted).toEqual([]);
  });

  it('names only cds_ metrics that the service serves, in every page', () => {
    const declared = servedServiceMetrics();
    // cds_live_ and cds_test_ are API key prefixes, cds_tracking_pass the tracking page's cookie: not metrics.
    const named = [...new Set(allDocs.match(/\bcds_[a-z0-9_]*[a-z0-9]/g) ?? [])].filter(
      (n) => !['cds_live', 'cds_test', 'cds_tracking_pass'].includes(n),
    );
    expect(named.length).toBeGreaterThan(5);
    expect(named.filter((name) => !declared.has(name))).toEqual([]);
  });

  it('names only temporal_ metrics that the Temporal SDK exports, in every page', () => {
    // temporal_visibility is the name of Temporal's second database, not a metric.
    const named = [...new Set(allDocs.match(/\btemporal_[a-z0-9_]+[a-z0-9]/g) ?? [])].filter((n) => n !== 'temporal_visibility');
    expect(named.length).toBeGreaterThan(3);
    expect(named.filter((name) => !isSdkMetric(name))).toEqual([]);
  });

  it('lists as Temporal SDK metrics only names the native core of the SDK contains', () => {
    const core = sdkCoreText();
    expect(SDK_METRICS.filter((name) => !core.includes(name))).toEqual([]);
  });
});

describe('deploy/prometheus/alerts.yaml in the runbook', () => {
  it('links every alert to a section of the runbook', () => {
    const links = rules.map((rule) => ({ alert: rule.alert, runbook_url: rule.annotations?.runbook_url ?? '' }));
    const broken = links.filter((l) => !/^docs\/runbook\.md#/.test(l.runbook_url) || !runbookAnchors.has(l.runbook_url.split('#')[1]));
    expect(broken).toEqual([]);
  });

  it('is listed in the runbook, alert by alert', () => {
    expect(rules.filter((rule) => !runbook.includes(`\`${rule.alert}\``)).map((r) => r.alert)).toEqual([]);
  });
});
