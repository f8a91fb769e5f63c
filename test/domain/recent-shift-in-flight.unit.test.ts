// The shift detector with the service's own registrations (domain/recent-shift.ts `inFlight`,
// domain/recent-change.ts shiftPeriod; docs/recent-shifts.md, issue 29):
// an imported history that ends at an export a few days ago, and since then the cards the service
// registered as they left, delivered (its issuers' recent deliveries) or still on their way. Where
// the service knows how many were sent, the cards not delivered after the area's usual transit are
// evidence of a slowdown younger than the transit; where they follow the norm, nothing is read, and
// the service's deliveries past the export never make the import's last days look fast.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';

import { addBusinessDays, businessDayOnOrAfter, businessDaysBetween } from '../../domain/calendar.js';
import { levelPredictives, RECENT_DAYS, type LevelStatistics, type TransitStatistics } from '../../domain/prediction-model.js';
import { MATURITY_QUANTILE, recentChange, withMatureRecent } from '../../domain/recent-change.js';
import { SUSPECT_EVIDENCE } from '../../domain/recent-shift.js';
import { quantile, total } from '../../domain/statistics.js';
import { transitDistribution } from '../support/transit-distribution.js';

const TODAY = '2026-11-20'; // a Friday
const COUNTRY = 'FR';
const dateBefore = (days: number) => new Date(Date.parse(`${TODAY}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);

interface Constructed {
  recent: Array<[number, number, number, number]>;
  inFlight: Array<[number, number]>;
}

/**
 * An area whose cards follow `p` (those of the last `since` days `shift` business days later),
 * `perDay` dispatched each day of the recent period, each transit's expected count rounded as a
 * running total: the import holds those delivered before its export `exportGap` days ago; the
 * service registered every card dispatched since the export day (to yesterday) as it left, and has
 * those delivered by yesterday as its issuers' deliveries and the rest on their way. `service`
 * false: the service registered nothing (the import alone).
 */
function constructed(p: number[], perDay: number, exportGap: number, shift = 0, since = -1, service = true): Constructed {
  const recent: Array<[number, number, number, number]> = [];
  const inFlight = new Map<number, number>();
  const running = new Map<number, number>();
  for (let ago = RECENT_DAYS - 1; ago >= 1; ago -= 1) {
    const start = businessDayOnOrAfter(dateBefore(ago), COUNTRY);
    p.forEach((mass, days) => {
      const y = ago <= since ? Math.max(1, days + shift) : days;
      const before = running.get(y) ?? 0;
      running.set(y, before + mass * perDay);
      const count = Math.round(before + mass * perDay) - Math.round(before);
      if (count <= 0) return;
      const delivered = addBusinessDays(start, y, COUNTRY);
      if (ago > exportGap) {
        if (delivered < dateBefore(exportGap)) recent.push([ago, y, count, 0]);
      } else if (service) {
        if (delivered < TODAY) recent.push([ago, y, count, count]);
        else inFlight.set(ago, (inFlight.get(ago) ?? 0) + count);
      }
    });
  }
  return { recent, inFlight: [...inFlight] };
}

const histogramOf = (p: number[], n: number) => p.map((mass) => Math.round(mass * n));

/** One area (code, prefix and country alike) with a long-run history following `p`. */
function network(p: number[], { recent, inFlight }: Constructed): TransitStatistics {
  const level = (scale: number): LevelStatistics => ({ fit: histogramOf(p, 3_000 * scale), calibration: histogramOf(p, 1_000 * scale), recent, inFlight }); // prettier-ignore
  return {
    postalCode: level(1),
    postalPrefix: level(2),
    country: { ...level(10), inFlight: undefined },
    operatorDelays: [],
    areaMoments: null,
  };
}

function changeOf(stats: TransitStatistics) {
  const p = levelPredictives(stats);
  return recentChange(stats, { postalCode: p.code, postalPrefix: p.prefix, country: p.country }, TODAY, COUNTRY);
}

const networkShape = fc.record({
  median: fc.double({ min: 1, max: 10, noNaN: true }),
  sigma: fc.double({ min: 0.1, max: 0.5, noNaN: true }),
  tail: fc.double({ min: 0, max: 0.06, noNaN: true }),
});

describe('the shift detector with the service’s own registrations', () => {
  it('reads no shift where the registrations since the export follow the norm, delivered or on their way', () => {
    fc.assert(
      fc.property(
        networkShape,
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 0, max: 10 }),
        ({ median, sigma, tail }, perDay, gap) => {
          const p = transitDistribution(median, sigma, tail);
          expect(changeOf(network(p, constructed(p, perDay, gap))).shift).toBeNull();
        },
      ),
      { numRuns: 60 },
    );
  });

  it('reads a slowdown younger than the transit from the cards still on their way, which the import cannot show', () => {
    // A 2-day network, 3 days slower since 5 days, its history exported 4 days ago: nothing
    // dispatched since the slowdown began had arrived by the export.
    const p = transitDistribution(2, 0.3, 0.02);
    const importOnly = changeOf(network(p, constructed(p, 15, 4, 3, 5, false)));
    expect(importOnly.shift?.evidence ?? 0).toBeLessThan(SUSPECT_EVIDENCE);
    const withService = changeOf(network(p, constructed(p, 15, 4, 3, 5)));
    expect(withService.shift).toMatchObject({ detected: false });
    expect(withService.shift!.days).toBeGreaterThanOrEqual(2);
    expect(withService.shift!.evidence).toBeGreaterThanOrEqual(SUSPECT_EVIDENCE);
    // Too young to confirm (the sign test): at most Medium, the window's end later.
    expect(withService).toMatchObject({ early: 0, uncertain: true });
    expect(withService.late).toBeGreaterThanOrEqual(2);
  });

  it('needs the count: the same deliveries without the cards on their way read no slowdown', () => {
    const p = transitDistribution(2, 0.3, 0.02);
    const { recent } = constructed(p, 15, 4, 3, 5);
    expect(changeOf(network(p, { recent, inFlight: [] })).shift?.evidence ?? 0).toBeLessThan(SUSPECT_EVIDENCE);
  });
});

describe('the maturity rule with the service’s own deliveries', () => {
  it('counts an imported delivery as mature by the export, the service’s by yesterday', () => {
    fc.assert(
      fc.property(networkShape, fc.integer({ min: 1, max: 7 }), ({ median, sigma, tail }, gap) => {
        const p = transitDistribution(median, sigma, tail);
        const c = constructed(p, 20, gap);
        const stats = network(p, c);
        const predictives = levelPredictives(stats);
        const norms = { postalCode: predictives.code, postalPrefix: predictives.prefix, country: predictives.country };
        const change = recentChange(stats, norms, TODAY, COUNTRY);
        const p99 = Math.max(quantile(norms.country, MATURITY_QUANTILE)!, quantile(norms.postalCode, MATURITY_QUANTILE)!);
        // Business days from the dispatch to the export's last day (imported) or to yesterday (the service's).
        const exported = c.recent.filter(([, , count, byIssuers]) => count > byIssuers);
        const lastImported = exported.reduce((last, [ago, y]) => {
          const delivered = addBusinessDays(businessDayOnOrAfter(dateBefore(ago), COUNTRY), y, COUNTRY);
          return delivered > last ? delivered : last;
        }, '');
        const age = (ago: number, until: string) => {
          const start = businessDayOnOrAfter(dateBefore(ago), COUNTRY);
          return start > until ? -1 : businessDaysBetween(start, until, COUNTRY);
        };
        const expected = c.recent
          .filter(([ago, , count, byIssuers]) => age(ago, byIssuers === count ? dateBefore(1) : lastImported) >= p99)
          .reduce((n, [, , count]) => n + count, 0);
        const added =
          total(withMatureRecent(stats, norms, change, TODAY, COUNTRY).postalCode.calibration) - total(stats.postalCode.calibration);
        expect(added).toBe(expected);
      }),
      { numRuns: 40 },
    );
  });
});
