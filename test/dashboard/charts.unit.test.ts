// The SVG chart module: bar heights proportional to the data, the 7-day empty state, escaping.
import { describe, expect, it } from '@jest/globals';
import { deliveriesChart, escapeXml, hitRateChart, latencyChart, NO_DELIVERIES } from '../../dashboard/charts.js';

const now = new Date('2026-11-25T12:30:00Z');
const hour = (iso: string) => new Date(iso);

function heights(svg: string, attr: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of svg.matchAll(new RegExp(`height="([\\d.]+)" fill="[^"]+" ${attr}="([^"]+)" data-value="(\\d+)"`, 'g'))) {
    out[`${m[2]}:${m[3]}`] = Number(m[1]);
  }
  return out;
}

describe('deliveriesChart', () => {
  it('draws bar heights proportional to the counts', () => {
    const svg = deliveriesChart(
      'c',
      [
        { hour: hour('2026-11-25T10:00:00Z'), delivered: 8, failed: 2, undeliverable: 0 },
        { hour: hour('2026-11-24T10:00:00Z'), delivered: 4, failed: 0, undeliverable: 1 },
      ],
      now,
    );
    const h = heights(svg, 'data-outcome');
    expect(h['delivered:4'] / h['delivered:8']).toBeCloseTo(0.5, 5);
    expect(h['failed:2'] / h['delivered:8']).toBeCloseTo(0.25, 5);
    expect(h['undeliverable:1'] / h['delivered:8']).toBeCloseTo(0.125, 5);
    expect(svg).toContain('In the last 7 days: 12 successful, 2 failed, 1 undeliverable attempts.');
    expect(svg).toContain('<td>8</td><td>2</td><td>0</td>');
  });

  it('leaves out hours older than 7 days', () => {
    const svg = deliveriesChart('c', [{ hour: hour('2026-11-18T11:00:00Z'), delivered: 3, failed: 0, undeliverable: 0 }], now);
    expect(svg).toContain(NO_DELIVERIES);
    expect(svg).not.toContain('<svg');
  });

  it('renders the empty state when there are no deliveries', () => {
    expect(deliveriesChart('c', [], now)).toBe(`<p class="chart-empty" id="c">${NO_DELIVERIES}</p>`);
    expect(latencyChart('l', [])).toContain('No deliveries in the last 7 days');
  });
});

describe('latencyChart', () => {
  it('scales p50/p95/p99 bars to the largest p99 and lists them in the table', () => {
    const svg = latencyChart('l', [{ day: hour('2026-11-25T00:00:00Z'), attempts: 5, p50: 100, p95: 200, p99: 400 }]);
    const h = heights(svg, 'data-percentile');
    expect(h['p50:100'] / h['p99:400']).toBeCloseTo(0.25, 5);
    expect(h['p95:200'] / h['p99:400']).toBeCloseTo(0.5, 5);
    expect(svg).toContain('<th scope="row">2026-11-25</th><td>5</td><td>100</td><td>200</td><td>400</td>');
  });
});

describe('hitRateChart', () => {
  it('draws the measured share as a bar and the target as a tick at its height', () => {
    const svg = hitRateChart('q', [{ label: '80 %', measured: 0.5, target: 0.8, count: 10 }]);
    const bar = /height="([\d.]+)" fill="#1e88e5"/.exec(svg)!;
    const tick = /y1="([\d.]+)" y2="[\d.]+" stroke="#000"/.exec(svg)!;
    const bottom = 180 - 22;
    expect(Number(bar[1]) / (bottom - Number(tick[1]))).toBeCloseTo(0.5 / 0.8, 2);
    expect(svg).toContain('80 %: 50 % inside, target 80 %');
  });
});

describe('escaping', () => {
  it('escapes text placed in the SVG and the table', () => {
    const svg = hitRateChart('q"><script>', [{ label: '<b>&"x\'', measured: 0.5, target: 0.5, count: 1 }]);
    expect(svg).not.toContain('<b>');
    expect(svg).not.toContain('<script>');
    expect(svg).toContain('&lt;b&gt;&amp;&quot;x&#39;');
    expect(escapeXml('<a href="x">&\'</a>')).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;');
  });
});
