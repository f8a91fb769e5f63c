// The capacity benchmark's report (README.md "How to read the report"): per round and side, the
// CPU per carrier event by process, history per life, registration and the capacity steps; then
// the medians over rounds with the ratios issue 33's goals read.
import { median } from '../status-read/report.js';
import type { SideResult } from './side.js';

export interface Report {
  date: string;
  label: string;
  settings: Record<string, unknown>;
  machine: { nproc: number; loadBefore: number[]; loadAfter: number[]; wallTime: string };
  rounds: Array<{ previous: SideResult; next: SideResult; order: string }>;
}

const r2 = (n: number) => Math.round(n * 100) / 100;

export function summary(report: Report) {
  const of = (pick: (s: SideResult) => number) => ({
    previous: median(report.rounds.map((r) => pick(r.previous))),
    next: median(report.rounds.map((r) => pick(r.next))),
  });
  const ours = of((s) => s.perEvent.cpuMs.ours);
  const capacity = of((s) => s.capacity);
  const registrationP99 = of((s) => s.registration.p99Ms);
  // At a rate both sides ran in the same round: was the new side's p99 ever worse?
  const worse = report.rounds.flatMap((r) =>
    r.next.steps
      .filter((step) => {
        const base = r.previous.steps.find((s) => s.rate === step.rate);
        return base !== undefined && step.p99Ms > base.p99Ms && step.p99Ms > 0.25 * Number(report.settings.limitMs);
      })
      .map((step) => step.rate),
  );
  return {
    ours,
    oursRatio: r2(ours.next / ours.previous),
    total: of((s) => s.perEvent.cpuMs.total),
    capacity,
    capacityRatio: r2(capacity.next / capacity.previous),
    registrationP99,
    worseAt: worse,
  };
}

export function toMarkdown(report: Report): string {
  const s = summary(report);
  const lines: string[] = [`# capacity ${report.date}`, ''];
  if (report.label) lines.push(`**${report.label}**`, '');
  const sides = [report.rounds[0].previous, report.rounds[0].next];
  lines.push(
    `previous main ${sides[0].commit.slice(0, 7)} · new ${sides[1].commit.slice(0, 7)} · ${report.rounds.length} rounds · ` +
      `nproc ${report.machine.nproc} · load average ${report.machine.loadBefore.join(' ')} → ${report.machine.loadAfter.join(' ')} · ${report.machine.wallTime}`,
    '',
    `Settings: \`${JSON.stringify(report.settings)}\``,
    '',
    '## Goals (medians over rounds)',
    '',
    '| goal | previous main | new | ratio | met |',
    '| --- | ---: | ---: | ---: | :---: |',
    `| API + worker CPU ms per event ≤ 0.7× | ${s.ours.previous} | ${s.ours.next} | ${s.oursRatio} | ${s.oursRatio <= 0.7 ? 'yes' : '**no**'} |`,
    `| (beside it) total CPU ms per event, Temporal and Postgres included | ${s.total.previous} | ${s.total.next} | ${r2(s.total.next / s.total.previous)} | |`,
    `| capacity (events/s at p99 ≤ ${String(report.settings.limitMs)} ms) ≥ 1.5× | ${s.capacity.previous} | ${s.capacity.next} | ${s.capacityRatio} | ${s.capacityRatio >= 1.5 ? 'yes' : '**no**'} |`,
    `| no step worse than previous main at the same rate | | | | ${s.worseAt.length ? `**no** (at ${s.worseAt.join(', ')}/s)` : 'yes'} |`,
    `| registration p99 register → queryable (ms) no worse | ${s.registrationP99.previous} | ${s.registrationP99.next} | ${r2(s.registrationP99.next / s.registrationP99.previous)} | ${s.registrationP99.next <= s.registrationP99.previous ? 'yes' : '**no**'} |`,
    '',
    '## Per round',
    '',
    '| round | side | CPU ms/event api / worker / temporal / postgres (ours, total) | busy % | history events / bytes per life (markers, tasks, activities) | registration p50 / p99 ms (503s retried) | capacity /s |',
    '| --- | --- | --- | ---: | --- | --- | ---: |',
  );
  report.rounds.forEach((r, i) => {
    for (const side of [r.previous, r.next]) {
      const c = side.perEvent.cpuMs;
      const l = side.life;
      lines.push(
        `| ${i + 1} (${r.order}) | ${side.label} | ${c.api} / ${c.worker} / ${c.temporal} / ${c.postgres} (**${c.ours}**, ${c.total}) | ${side.perEvent.machineBusyPercent} | ${l.historyEvents} / ${l.historyBytes} (${l.markers}, ${l.workflowTasks}, ${l.activities}) | ${side.registration.p50Ms} / ${side.registration.p99Ms} (${side.registration.retried503}) | **${side.capacity}** |`,
      );
    }
  });
  lines.push(...threadTable(report), ...repeatTable(report));
  lines.push('', '## Capacity steps (p50 / p99 / max ms event → webhook; missing; ours CPU ms/event; machine busy %)', '');
  const rates = [...new Set(report.rounds.flatMap((r) => [...r.previous.steps, ...r.next.steps].map((st) => st.rate)))].sort(
    (a, b) => a - b,
  );
  lines.push(`| round | side | ${rates.map((rate) => `${rate}/s`).join(' | ')} |`, `| --- | --- | ${rates.map(() => '---').join(' | ')} |`);
  report.rounds.forEach((r, i) => {
    for (const side of [r.previous, r.next]) {
      const cells = rates.map((rate) => {
        const st = side.steps.find((x) => x.rate === rate);
        const ms = (n: number) => (Number.isFinite(n) ? String(Math.round(n)) : '∞');
        return st
          ? `${ms(st.p50Ms)} / ${ms(st.p99Ms)} / ${ms(st.maxMs)}; ${st.missing}; ${st.oursCpuMsPerEvent}; ${st.machineBusyPercent}`
          : '';
      });
      lines.push(`| ${i + 1} | ${side.label} | ${cells.join(' | ')} |`);
    }
  });
  const failures = report.rounds.flatMap((r) => [r.previous, r.next]).flatMap((side) => side.failures.map((f) => `${side.label}: ${f}`));
  lines.push('', failures.length ? `Failures: ${failures.join('; ')}` : 'No failures.', '');
  return lines.join('\n');
}

/**
 * The worker's CPU per event by thread (the CPU window, medians over rounds), both sides: the main
 * thread runs the activities and the SDK's bridge, `WorkerThread` the workflow code in its vm,
 * `tokio-runtime-w` and `workflow-proces` the SDK's Rust core, `V8Worker` V8's GC and compiler
 * helpers; `(exited threads)` is what ended threads left (the vm's per-call watchdog among them).
 */
function threadTable(report: Report): string[] {
  const sides = report.rounds.flatMap((r) => [r.previous, r.next]);
  if (sides.some((side) => !side.workerThreadsCpuMs)) return [];
  const names = [...new Set(sides.flatMap((side) => Object.keys(side.workerThreadsCpuMs)))];
  const of = (pick: (r: Report['rounds'][number]) => SideResult, name: string) =>
    r2(median(report.rounds.map((r) => pick(r).workerThreadsCpuMs[name] ?? 0)));
  const rows = names
    .map((name) => ({ name, previous: of((r) => r.previous, name), next: of((r) => r.next, name) }))
    .filter((row) => row.previous >= 0.05 || row.next >= 0.05)
    .sort((a, b) => b.previous + b.next - (a.previous + a.next));
  return [
    '',
    '## Worker CPU by thread (ms per event in the CPU window, medians over rounds)',
    '',
    '| thread | previous main | new | ratio |',
    '| --- | ---: | ---: | ---: |',
    ...rows.map((row) => `| ${row.name} | ${row.previous} | ${row.next} | ${row.previous > 0 ? r2(row.next / row.previous) : ''} |`),
  ];
}

/**
 * The same events sent again, each a duplicate (logged as one, signalled, deduped by the workflow:
 * one workflow task, no write, no webhook), medians over rounds beside a change's: what the change's
 * write, its webhook and their workflow tasks add to an event's cost.
 */
function repeatTable(report: Report): string[] {
  const sides = report.rounds.flatMap((r) => [r.previous, r.next]);
  if (sides.some((side) => !side.perRepeat)) return [];
  const of = (pick: (r: Report['rounds'][number]) => number) => r2(median(report.rounds.map(pick)));
  const row = (what: string, pick: (side: SideResult) => number) =>
    `| ${what} | ${of((r) => pick(r.previous))} | ${of((r) => pick(r.next))} |`;
  return [
    '',
    '## An event that changes nothing (the same events again, each a duplicate), beside a change (ms per event, medians over rounds)',
    '',
    '| | previous main | new |',
    '| --- | ---: | ---: |',
    row('change: API + worker', (s) => s.perEvent.cpuMs.ours),
    row('duplicate: API + worker', (s) => s.perRepeat.cpuMs.ours),
    row('duplicate: API', (s) => s.perRepeat.cpuMs.api),
    row('duplicate: worker', (s) => s.perRepeat.cpuMs.worker),
    row('duplicate: worker main thread', (s) => s.perRepeat.workerThreadsCpuMs.MainThread ?? 0),
    row('duplicate: worker workflow thread', (s) => s.perRepeat.workerThreadsCpuMs.WorkerThread ?? 0),
    row('duplicate: worker Rust core (tokio-runtime-w + workflow-proces)', (s) => (s.perRepeat.workerThreadsCpuMs['tokio-runtime-w'] ?? 0) + (s.perRepeat.workerThreadsCpuMs['workflow-proces'] ?? 0)), // prettier-ignore
    row('duplicate: total, Temporal and Postgres included', (s) => s.perRepeat.cpuMs.total),
  ];
}
