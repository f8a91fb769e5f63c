// Dashboard charts as server-rendered SVG: pure functions from data series to an HTML string (an
// <svg role="img"> with a <title> per bar, followed by a table with the same numbers for screen
// readers and for reading exact values). No client script, no dependency; every text is escaped.
// The views place the returned string with Eta's raw `<%~ %>`.

const WIDTH = 720;
const HEIGHT = 180;
const LEFT = 44;
const RIGHT = 8;
const TOP = 8;
const BOTTOM = 22;
const PLOT_W = WIDTH - LEFT - RIGHT;
const PLOT_H = HEIGHT - TOP - BOTTOM;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
export const CHART_DAYS = 7;

/** Escapes text for HTML and SVG content and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

/** Heights are proportional to the value: value / max × plot height (0 when max is 0). */
function barHeight(value: number, max: number): number {
  return max > 0 ? (value / max) * PLOT_H : 0;
}

function axis(max: number, unit: string): string {
  const y0 = TOP + PLOT_H;
  return (
    `<line x1="${LEFT}" y1="${y0}" x2="${WIDTH - RIGHT}" y2="${y0}" stroke="#555"/>` +
    `<text x="${LEFT - 4}" y="${TOP + 10}" text-anchor="end" font-size="10" fill="#333">${escapeXml(fmt(max) + unit)}</text>` +
    `<text x="${LEFT - 4}" y="${y0}" text-anchor="end" font-size="10" fill="#333">0</text>`
  );
}

function svgOpen(id: string, title: string, summary: string): string {
  return (
    `<svg class="chart" id="${escapeXml(id)}" role="img" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" ` +
    `aria-labelledby="${escapeXml(id)}-title ${escapeXml(id)}-desc" xmlns="http://www.w3.org/2000/svg">` +
    `<title id="${escapeXml(id)}-title">${escapeXml(title)}</title><desc id="${escapeXml(id)}-desc">${escapeXml(summary)}</desc>`
  );
}

function table(caption: string, head: string[], rows: Array<Array<string | number>>): string {
  return (
    `<details class="chart-data"><summary>${escapeXml(caption)} as a table</summary><table><caption>${escapeXml(caption)}</caption>` +
    `<thead><tr>${head.map((h) => `<th scope="col">${escapeXml(h)}</th>`).join('')}</tr></thead><tbody>` +
    rows
      .map(
        (r) =>
          `<tr><th scope="row">${escapeXml(String(r[0]))}</th>${r
            .slice(1)
            .map((c) => `<td>${escapeXml(String(c))}</td>`)
            .join('')}</tr>`,
      )
      .join('') +
    `</tbody></table></details>`
  );
}

// ---- Delivery attempts per hour by outcome, last 7 days (stacked bars).

export const DELIVERY_OUTCOMES = [
  { key: 'delivered', label: 'Success', color: '#2e7d32' },
  { key: 'failed', label: 'Failed', color: '#e65100' },
  { key: 'undeliverable', label: 'Undeliverable', color: '#b71c1c' },
] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number]['key'];

export interface HourlyOutcomeRow {
  /** The start of the hour (UTC). */
  hour: Date;
  delivered: number;
  failed: number;
  undeliverable: number;
}

export const NO_DELIVERIES = 'No deliveries in the last 7 days.';

/**
 * One bar per hour of the 7 days up to `now` (hours without attempts are empty), stacked by outcome;
 * the accessible text gives the week's totals, and the table each day's.
 */
export function deliveriesChart(id: string, rows: HourlyOutcomeRow[], now: Date): string {
  const lastHour = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  const firstHour = lastHour - (CHART_DAYS * 24 - 1) * HOUR_MS;
  const byHour = new Map(rows.filter((r) => r.hour.getTime() >= firstHour).map((r) => [r.hour.getTime(), r]));
  const totals = { delivered: 0, failed: 0, undeliverable: 0 };
  for (const r of byHour.values()) for (const o of DELIVERY_OUTCOMES) totals[o.key] += r[o.key];
  const all = totals.delivered + totals.failed + totals.undeliverable;
  const title = 'Delivery attempts per hour by outcome, last 7 days';
  if (all === 0) return `<p class="chart-empty" id="${escapeXml(id)}">${escapeXml(NO_DELIVERIES)}</p>`;
  const summary = `In the last 7 days: ${totals.delivered} successful, ${totals.failed} failed, ${totals.undeliverable} undeliverable attempts.`;
  const n = CHART_DAYS * 24;
  const slot = PLOT_W / n;
  const max = Math.max(...[...byHour.values()].map((r) => r.delivered + r.failed + r.undeliverable));
  let bars = '';
  for (let i = 0; i < n; i++) {
    const t = firstHour + i * HOUR_MS;
    const r = byHour.get(t);
    if (!r) continue;
    let y = TOP + PLOT_H;
    const label = new Date(t).toISOString().slice(0, 13).replace('T', ' ') + ':00 UTC';
    for (const o of DELIVERY_OUTCOMES) {
      const v = r[o.key];
      if (v === 0) continue;
      const h = barHeight(v, max);
      y -= h;
      bars +=
        `<rect x="${(LEFT + i * slot).toFixed(2)}" y="${y.toFixed(2)}" width="${Math.max(slot - 0.5, 1).toFixed(2)}" height="${h.toFixed(2)}" ` +
        `fill="${o.color}" data-outcome="${o.key}" data-value="${v}"><title>${escapeXml(`${label}: ${v} ${o.label.toLowerCase()}`)}</title></rect>`;
    }
  }
  let ticks = '';
  for (let d = 0; d < CHART_DAYS; d++) {
    const t = firstHour + d * DAY_MS;
    ticks += `<text x="${(LEFT + d * 24 * slot).toFixed(2)}" y="${HEIGHT - 6}" font-size="10" fill="#333">${escapeXml(new Date(t).toISOString().slice(5, 10))}</text>`;
  }
  const legend = `<ul class="chart-legend">${DELIVERY_OUTCOMES.map((o) => `<li><span class="swatch" aria-hidden="true"><svg width="10" height="10"><rect width="10" height="10" fill="${o.color}"/></svg></span> ${escapeXml(o.label)}</li>`).join('')}</ul>`;
  const days = new Map<string, [number, number, number]>();
  for (const r of byHour.values()) {
    const day = r.hour.toISOString().slice(0, 10);
    const d = days.get(day) ?? [0, 0, 0];
    days.set(day, [d[0] + r.delivered, d[1] + r.failed, d[2] + r.undeliverable]);
  }
  const dayRows = [...days.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([day, [s, f, u]]) => [day, s, f, u]);
  return (
    svgOpen(id, title, summary) +
    axis(max, '') +
    bars +
    ticks +
    `</svg>${legend}<p class="chart-summary">${escapeXml(summary)}</p>` +
    table('Attempts per day (UTC)', ['Day', 'Success', 'Failed', 'Undeliverable'], dayRows)
  );
}

// ---- Attempt duration percentiles per day, last 7 days (grouped bars).

export interface DailyLatencyRow {
  /** The day (UTC midnight). */
  day: Date;
  attempts: number;
  p50: number;
  p95: number;
  p99: number;
}

const PERCENTILES = [
  { key: 'p50', color: '#90caf9' },
  { key: 'p95', color: '#1e88e5' },
  { key: 'p99', color: '#0d47a1' },
] as const;

export function latencyChart(id: string, rows: DailyLatencyRow[]): string {
  if (rows.length === 0) return `<p class="chart-empty" id="${escapeXml(id)}">${escapeXml(NO_DELIVERIES)}</p>`;
  const title = 'Attempt duration percentiles per day, last 7 days (ms)';
  const sorted = [...rows].sort((a, b) => a.day.getTime() - b.day.getTime());
  const max = Math.max(...sorted.map((r) => r.p99), 1);
  const slot = PLOT_W / CHART_DAYS;
  const bw = (slot * 0.8) / 3;
  let bars = '';
  sorted.forEach((r, i) => {
    const label = r.day.toISOString().slice(0, 10);
    PERCENTILES.forEach((p, j) => {
      const h = barHeight(r[p.key], max);
      bars +=
        `<rect x="${(LEFT + i * slot + slot * 0.1 + j * bw).toFixed(2)}" y="${(TOP + PLOT_H - h).toFixed(2)}" width="${bw.toFixed(2)}" height="${h.toFixed(2)}" ` +
        `fill="${p.color}" data-percentile="${p.key}" data-value="${r[p.key]}"><title>${escapeXml(`${label}: ${p.key} ${fmt(r[p.key])} ms`)}</title></rect>`;
    });
    bars += `<text x="${(LEFT + i * slot + slot * 0.1).toFixed(2)}" y="${HEIGHT - 6}" font-size="10" fill="#333">${escapeXml(label.slice(5))}</text>`;
  });
  const summary = `Attempt durations on ${sorted.length} day(s); the slowest p99 was ${fmt(max)} ms.`;
  const legend = `<ul class="chart-legend">${PERCENTILES.map((p) => `<li><span class="swatch" aria-hidden="true"><svg width="10" height="10"><rect width="10" height="10" fill="${p.color}"/></svg></span> ${p.key}</li>`).join('')}</ul>`;
  return (
    svgOpen(id, title, summary) +
    axis(max, ' ms') +
    bars +
    `</svg>${legend}` +
    table(
      'Attempt duration per day (ms, UTC)',
      ['Day', 'Attempts', 'p50', 'p95', 'p99'],
      sorted.map((r) => [r.day.toISOString().slice(0, 10), r.attempts, fmt(r.p50), fmt(r.p95), fmt(r.p99)]),
    )
  );
}

// ---- Measured hit rate per confidence level against its target (bars with a target tick).

export interface HitRateRow {
  label: string;
  /** Shares, 0..1. */
  measured: number;
  target: number;
  count: number;
}

export function hitRateChart(id: string, rows: HitRateRow[]): string {
  if (rows.length === 0) return `<p class="chart-empty" id="${escapeXml(id)}">No delivered dispatches with a prediction yet.</p>`;
  const title = 'Measured share inside the window per confidence level, against its target';
  const slot = PLOT_W / rows.length;
  const pct = (v: number) => `${fmt(Math.round(v * 1000) / 10)} %`;
  let bars = '';
  rows.forEach((r, i) => {
    const x = LEFT + i * slot + slot * 0.2;
    const w = slot * 0.6;
    const h = barHeight(r.measured, 1);
    const ty = TOP + PLOT_H - barHeight(r.target, 1);
    bars +=
      `<rect x="${x.toFixed(2)}" y="${(TOP + PLOT_H - h).toFixed(2)}" width="${w.toFixed(2)}" height="${h.toFixed(2)}" fill="#1e88e5" data-value="${r.measured}">` +
      `<title>${escapeXml(`${r.label}: ${pct(r.measured)} inside (target ${pct(r.target)}, ${r.count} dispatches)`)}</title></rect>` +
      `<line x1="${(x - 6).toFixed(2)}" x2="${(x + w + 6).toFixed(2)}" y1="${ty.toFixed(2)}" y2="${ty.toFixed(2)}" stroke="#000" stroke-width="2" data-target="${r.target}">` +
      `<title>${escapeXml(`${r.label}: target ${pct(r.target)}`)}</title></line>` +
      `<text x="${x.toFixed(2)}" y="${HEIGHT - 6}" font-size="10" fill="#333">${escapeXml(r.label)}</text>`;
  });
  const summary = rows.map((r) => `${r.label}: ${pct(r.measured)} inside, target ${pct(r.target)}`).join('; ') + '.';
  return svgOpen(id, title, summary) + axis(100, ' %') + bars + `</svg><p class="chart-summary">${escapeXml(summary)}</p>`;
}
