// The history-based prediction model (domain/prediction-model.ts): fallback levels, shrinkage of
// sparse postal codes with weights estimated from the country's spread between areas, the
// confidence a whole set of statistics gets (the rules themselves: prediction-levels.unit.test.ts),
// per-level calibration on constructed histories and split-conformal coverage per level on a seeded
// synthetic carrier network, recent shifts and operator delays, and the invariants every window keeps.
import { describe, it, expect } from '@jest/globals';
import { addBusinessDays, businessDayOnOrAfter, businessDaysBetween } from '../../domain/calendar.js';
import { predict, type PredictionInput } from '../../domain/prediction.js';
import {
  calibratedWindow,
  DEFAULT_PRIOR_STRENGTH,
  MAX_PRIOR_STRENGTH,
  MOMENT_CAP_DAYS,
  postalPrefixOf,
  predictFromHistory,
  predictiveDistribution,
  priorStrengths,
  RECENT_DAYS,
  unresolvedAreaVariance,
  type LevelStatistics,
  type TransitStatistics,
} from '../../domain/prediction-model.js';
import { TARGET_COVERAGE } from '../../domain/prediction-levels.js';
import { MIN_SHIFT_DELIVERIES } from '../../domain/recent-shift.js';
import type { DispatchState } from '../../domain/state-machine.js';
import type { ConfidenceLevel } from '../../domain/vocabulary.js';
import { quantile, varianceComponents, type AreaMoments } from '../../domain/statistics.js';

const TODAY = '2026-11-20'; // a Friday
const DISPATCHED_AT = `${TODAY}T09:00:00.000Z`;
const PARIS = { postal_code: '75011', country_code: 'FR' };

/** A histogram from transit times: [2, 2, 3] → [0, 0, 2, 1]. */
function hist(days: number[]): number[] {
  const h: number[] = [];
  for (const d of days) {
    while (h.length <= d) h.push(0);
    h[d] += 1;
  }
  return h;
}
const repeat = (day: number, times: number) => Array<number>(times).fill(day);

/**
 * A level whose long-run history is `days`, the last quarter held out; `recent`: deliveries of the
 * last RECENT_DAYS as [calendar days since dispatch, transit], if any.
 */
function level(days: number[], recent: Array<[number, number]> = []): LevelStatistics {
  const cut = Math.floor(days.length * 0.75);
  return {
    fit: hist(days.slice(0, cut)),
    calibration: hist(days.slice(cut)),
    recent: recent.map(([since, transit]) => [since, transit, 1]),
  };
}

/** mulberry32: a small seeded generator, so synthetic networks are the same on every run. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** One past delivery of a synthetic country: where it went and its transit in business days. */
interface Delivery {
  code: string;
  prefix: string;
  days: number;
}

/** What db/transit-statistics.ts sums in SQL for the shrinkage weights, on the same rules (deliveries already mature). */
function momentsOf(deliveries: readonly Delivery[]): AreaMoments {
  const byCode = new Map<string, { prefix: string; n: number; s: number }>();
  const m = { deliveries: 0, sum: 0, sumOfSquares: 0, codeSquares: 0, prefixSquares: 0, codeWithinPrefixWeights: 0, codeWeights: 0, prefixWeights: 0 }; // prettier-ignore
  for (const d of deliveries) {
    const x = Math.min(d.days, MOMENT_CAP_DAYS);
    const code = byCode.get(d.code) ?? { prefix: d.prefix, n: 0, s: 0 };
    byCode.set(d.code, { prefix: d.prefix, n: code.n + 1, s: code.s + x });
    m.deliveries += 1;
    m.sum += x;
    m.sumOfSquares += x * x;
  }
  const byPrefix = new Map<string, { n: number; s: number; codeWeights: number }>();
  for (const code of byCode.values()) {
    const prefix = byPrefix.get(code.prefix) ?? { n: 0, s: 0, codeWeights: 0 };
    byPrefix.set(code.prefix, { n: prefix.n + code.n, s: prefix.s + code.s, codeWeights: prefix.codeWeights + code.n ** 2 });
    m.codeSquares += code.s ** 2 / code.n;
    m.codeWeights += code.n ** 2;
  }
  for (const prefix of byPrefix.values()) {
    m.prefixSquares += prefix.s ** 2 / prefix.n;
    m.codeWithinPrefixWeights += prefix.codeWeights / prefix.n;
    m.prefixWeights += prefix.n ** 2;
  }
  return { ...m, codes: byCode.size, prefixes: byPrefix.size };
}

/**
 * A country of `prefixes` prefixes of 10 codes with 100 deliveries each: transit = 5 + prefix
 * effect (sd `prefixSd`) + code effect (sd `codeSd`) + noise (sd 1), in real numbers so the
 * variances are known.
 */
function nestedCountry(seed: number, prefixSd: number, codeSd: number, prefixes = 40): Delivery[] {
  const random = rng(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const deliveries: Delivery[] = [];
  for (let p = 0; p < prefixes; p += 1) {
    const prefixEffect = prefixSd * normal();
    for (let c = 0; c < 10; c += 1) {
      const codeEffect = codeSd * normal();
      for (let i = 0; i < 100; i += 1)
        deliveries.push({ code: `${p}-${c}`, prefix: String(p), days: 5 + prefixEffect + codeEffect + normal() });
    }
  }
  return deliveries;
}

/** 2 to 4 business days in a steady mix, like French letter post. */
const steady = (n: number) => Array.from({ length: n }, (_, i) => [2, 3, 3, 3, 4][i % 5]);

function stats(overrides: Partial<TransitStatistics> = {}): TransitStatistics {
  return {
    postalCode: level(steady(200)),
    postalPrefix: level(steady(2_000)),
    country: level(steady(20_000)),
    operatorDelays: [],
    areaMoments: null,
    ...overrides,
  };
}

function input(state: Partial<DispatchState> = {}, today = TODAY, destination = PARIS): PredictionInput {
  return { dispatchDate: DISPATCHED_AT, destination, state: { status: 'in_transit', statusSince: DISPATCHED_AT, ...state }, today };
}

/** The window in business days after the dispatch's first business day. */
function windowDays(prediction: { window: { min: string; max: string } }, country = 'FR'): [number, number] {
  const start = businessDayOnOrAfter(TODAY, country);
  return [businessDaysBetween(start, prediction.window.min, country), businessDaysBetween(start, prediction.window.max, country)];
}

describe('postal prefix', () => {
  it('is the first 2 characters in FR, DE, ES and IT, the outward code in GB and the ZIP3 in US', () => {
    expect(postalPrefixOf('75011', 'FR')).toBe('75');
    expect(postalPrefixOf('10115', 'DE')).toBe('10');
    expect(postalPrefixOf('sw1a 1aa', 'GB')).toBe('SW1A');
    expect(postalPrefixOf('M1 1AE', 'GB')).toBe('M1');
    expect(postalPrefixOf('94103-1234', 'US')).toBe('941');
  });
});

describe('fallback levels', () => {
  it('uses the foundation table when there are no statistics', () => {
    expect(predictFromHistory(input(), null)).toEqual(predict(input()));
  });

  it('uses the foundation table when the country has fewer than 30 deliveries', () => {
    const sparse = stats({ postalCode: level([]), postalPrefix: level([]), country: level(repeat(9, 29)) });
    expect(predictFromHistory(input(), sparse)).toEqual(predict(input()));
  });

  it('gives a postal code without history its prefix’s window, not the country’s', () => {
    const slowPrefix = stats({ postalCode: level([]), postalPrefix: level(repeat(6, 400)), country: level(steady(20_000)) });
    const [min, max] = windowDays(predictFromHistory(input(), slowPrefix));
    expect(min).toBeGreaterThanOrEqual(5);
    expect(max).toBeLessThanOrEqual(7);
  });

  it('gives a prefix without history the country’s window', () => {
    const onlyCountry = stats({ postalCode: level([]), postalPrefix: level([]), country: level(repeat(4, 400)) });
    const [min, max] = windowDays(predictFromHistory(input(), onlyCountry));
    expect(min).toBeGreaterThanOrEqual(3);
    expect(max).toBeLessThanOrEqual(5);
  });
});

describe('shrinkage', () => {
  it('pulls a sparse postal code toward its prefix', () => {
    const sparse = stats({ postalCode: level(repeat(1, 4)), postalPrefix: level(repeat(5, 1_000)) });
    // 3 fitted deliveries at 1 day against a prior worth 20 deliveries at 5 days: mostly the prefix.
    expect(quantile(predictiveDistribution(sparse), 0.5)).toBe(5);
  });

  it('lets a sparse prefix much slower than its country move the window where prefixes differ', () => {
    // 24 deliveries at 6 days in a country at 2–4: the overseas département of a French network.
    const overseas = stats({ postalCode: level([]), postalPrefix: level(repeat(6, 24)), country: level(steady(20_000)) });
    const alike = priorStrengths(momentsOf(nestedCountry(1, 0, 0)));
    const differ = priorStrengths(momentsOf(nestedCountry(1, 1.5, 0)));
    expect(differ.prefix).toBeLessThanOrEqual(2);
    expect(alike.prefix).toBe(MAX_PRIOR_STRENGTH);
    const [min, max] = windowDays(predictFromHistory(input(), { ...overseas, areaMoments: momentsOf(nestedCountry(1, 1.5, 0)) }));
    expect(min).toBeLessThanOrEqual(6);
    expect(max).toBeGreaterThanOrEqual(6);
    const [, alikeMax] = windowDays(predictFromHistory(input(), { ...overseas, areaMoments: momentsOf(nestedCountry(1, 0, 0)) }));
    expect(alikeMax).toBeLessThan(6);
  });

  it('lets a postal code with plenty of history speak for itself', () => {
    const rich = stats({ postalCode: level(repeat(1, 800)), postalPrefix: level(repeat(5, 1_000)) });
    expect(quantile(predictiveDistribution(rich), 0.5)).toBe(1);
    expect(quantile(predictiveDistribution(rich), 0.9)).toBe(1);
  });
});

describe('shrinkage weights (credibility from the country’s variance components)', () => {
  it('recovers the noise, code and prefix variances of a nested network', () => {
    const v = varianceComponents(momentsOf(nestedCountry(7, 1, 0.5)))!;
    expect(v.withinCode).toBeCloseTo(1, 1);
    expect(v.betweenCodes).toBeGreaterThan(0.25 * 0.8);
    expect(v.betweenCodes).toBeLessThan(0.25 * 1.2);
    expect(v.betweenPrefixes).toBeGreaterThan(0.6);
    expect(v.betweenPrefixes).toBeLessThan(1.4);
  });

  it('is the noise over the spread between areas: small where areas differ, the maximum where they do not', () => {
    const differ = priorStrengths(momentsOf(nestedCountry(7, 1, 0.5)));
    expect(differ.code).toBeGreaterThan(4 * 0.8);
    expect(differ.code).toBeLessThan(4 * 1.2);
    expect(differ.prefix).toBeGreaterThan(0.8);
    expect(differ.prefix).toBeLessThan(2.5);
    expect(priorStrengths(momentsOf(nestedCountry(7, 0, 0)))).toEqual({ prefix: MAX_PRIOR_STRENGTH, code: MAX_PRIOR_STRENGTH });
  });

  it('is the default where the country has no history or a single area', () => {
    const defaults = { prefix: DEFAULT_PRIOR_STRENGTH, code: DEFAULT_PRIOR_STRENGTH };
    expect(priorStrengths(null)).toEqual(defaults);
    expect(priorStrengths(momentsOf(repeat(3, 50).map((days) => ({ code: '75011', prefix: '75', days }))))).toEqual(defaults);
  });
});

describe('confidence', () => {
  it('is High for a well-known code in a normal week and Low for a new code of the same prefix', () => {
    const prefix = level(Array.from({ length: 3_000 }, (_, i) => steady(1)[0] + (i % 3) + [0, 0, 1, 1, 2][i % 5] - 1));
    expect(predictFromHistory(input(), stats({ postalPrefix: prefix })).confidence).toBe('High');
    expect(predictFromHistory(input(), stats({ postalPrefix: prefix, postalCode: level([]) })).confidence).toBe('Low');
    expect(predictFromHistory(input(), stats({ postalPrefix: prefix, postalCode: level(steady(5)) })).confidence).toBe('Low');
  });
});

describe('coverage on a seeded synthetic carrier network', () => {
  const random = rng(20261120);
  const dayMs = 86_400_000;
  const shiftDate = (date: string, days: number) => new Date(Date.parse(date) + days * dayMs).toISOString().slice(0, 10);

  /** Postal code → its slowness: a prefix base, a code offset, and a long late tail. */
  interface Code {
    code: string;
    prefix: string;
    base: number;
    volume: number;
  }
  const codes: Code[] = [];
  for (const [prefix, base] of [
    ['75', 2],
    ['69', 3],
    ['13', 3],
    ['33', 4],
    ['59', 5],
  ] as const) {
    const volumes = [400, 300, 250, 30, 25, 20, 15, 12, 6, 5, 4, 3, 2, 1];
    volumes.forEach((volume, i) => codes.push({ code: `${prefix}${String(100 + i * 7).padStart(3, '0')}`, prefix, base: base + (i % 3 === 2 ? 1 : 0), volume })); // prettier-ignore
  }
  function transit(code: Code): number {
    const u = random();
    const tail = u < 0.6 ? 0 : u < 0.85 ? 1 : u < 0.95 ? 2 : 3 + Math.floor(-Math.log(random()) * 2);
    return code.base + tail;
  }

  interface Row {
    code: string;
    prefix: string;
    dispatch: string;
    delivered: string;
    days: number;
  }
  const history: Row[] = [];
  for (const code of codes)
    for (let i = 0; i < code.volume; i += 1) {
      const dispatch = shiftDate(TODAY, -1 - Math.floor(random() * 365));
      const days = transit(code);
      const delivered = addBusinessDays(businessDayOnOrAfter(dispatch, 'FR'), days, 'FR');
      // Cards still on their way today are not in the history yet (as in the real table).
      if (delivered <= TODAY) history.push({ code: code.code, prefix: code.prefix, dispatch, delivered, days });
    }

  /** What db/transit-statistics.ts loadTransitStatistics computes in SQL, computed here on the same rules. */
  function levelOf(rows: Row[]): LevelStatistics {
    const mature = rows.filter((r) => r.dispatch <= shiftDate(TODAY, -RECENT_DAYS));
    const byDispatch = [...mature].sort((a, b) => a.dispatch.localeCompare(b.dispatch));
    const fit: number[] = [];
    const calibration: number[] = [];
    byDispatch.forEach((row, i) => {
      let last = i;
      while (last + 1 < byDispatch.length && byDispatch[last + 1].dispatch === row.dispatch) last += 1;
      const target = (last + 1) / byDispatch.length > 0.75 ? calibration : fit;
      while (target.length <= row.days) target.push(0);
      target[row.days] += 1;
    });
    const recent = rows
      .filter((r) => r.dispatch > shiftDate(TODAY, -RECENT_DAYS))
      .map((r): [number, number, number] => [(Date.parse(TODAY) - Date.parse(r.dispatch)) / dayMs, r.days, 1]);
    return { fit, calibration, recent };
  }
  const countryLevel = levelOf(history);
  const areaMoments = momentsOf(history.filter((r) => r.dispatch <= shiftDate(TODAY, -RECENT_DAYS)));
  const prefixLevels = new Map(['75', '69', '13', '33', '59'].map((p) => [p, levelOf(history.filter((r) => r.prefix === p))]));

  it('meets each confidence level’s target coverage on held-out dispatches', () => {
    const results = new Map<ConfidenceLevel, { inside: number; total: number; widths: number[] }>();
    for (const code of codes) {
      const statistics: TransitStatistics = {
        postalCode: levelOf(history.filter((r) => r.code === code.code)),
        postalPrefix: prefixLevels.get(code.prefix) as LevelStatistics,
        country: countryLevel,
        operatorDelays: [],
        areaMoments,
      };
      const prediction = predictFromHistory(input({ status: 'dispatched' }, TODAY, { postal_code: code.code, country_code: 'FR' }), statistics); // prettier-ignore
      const [min, max] = windowDays(prediction);
      const result = results.get(prediction.confidence) ?? { inside: 0, total: 0, widths: [] };
      for (let i = 0; i < 200; i += 1) {
        const actual = transit(code);
        result.total += 1;
        if (actual >= min && actual <= max) result.inside += 1;
      }
      result.widths.push(max - min + 1);
      results.set(prediction.confidence, result);
    }
    const report = [...results].map(([confidence, r]) => {
      const widths = [...r.widths].sort((a, b) => a - b);
      return { confidence, target: TARGET_COVERAGE[confidence], coverage: r.inside / r.total, codes: r.widths.length, median_width_days: widths[Math.floor(widths.length / 2)] }; // prettier-ignore
    });
    process.stderr.write(`synthetic coverage: ${JSON.stringify(report)}\n`);
    expect(report.map((r) => r.confidence).sort()).toEqual(['High', 'Low', 'Medium']);
    // 200 draws per postal code: allow two points of sampling noise below the target.
    for (const r of report) expect(r.coverage).toBeGreaterThanOrEqual(r.target - 0.02);
    // Each level's target is what it promises, so the hit rates are ordered as the targets are.
    const coverage = (confidence: ConfidenceLevel) => report.find((r) => r.confidence === confidence)!.coverage;
    expect(coverage('High')).toBeGreaterThan(coverage('Medium'));
    expect(coverage('Medium')).toBeGreaterThan(coverage('Low'));
  });
});

describe('per-level calibration on constructed histories', () => {
  // One postal code's transit: a body of 2–4 days and a long tail (1 card in 20 held up 3–9 more),
  // like letter post with sorting hold-ups. Drawn from a seeded generator.
  const random = rng(97);
  const draw = () => {
    const body = [2, 3, 3, 3, 4][Math.floor(random() * 5)];
    return random() < 0.05 ? body + 3 + Math.floor(random() * 7) : body;
  };
  const code = level(Array.from({ length: 400 }, draw));
  const prefix = level(Array.from({ length: 4_000 }, draw));
  const country = level(Array.from({ length: 40_000 }, draw));
  const constructed = stats({ postalCode: code, postalPrefix: prefix, country });
  const sample = Array.from({ length: 20_000 }, draw);
  const held = ([min, max]: [number, number]) => sample.filter((d) => d >= min && d <= max).length / sample.length;

  it('holds at least 97 % of a held-out sample from the same distribution with the 97 % window, and each level’s target with its own', () => {
    for (const coverage of Object.values(TARGET_COVERAGE))
      expect(held(calibratedWindow(constructed, coverage))).toBeGreaterThanOrEqual(coverage);
  });

  it('makes the 85 % window no wider than the 92 % one, and that no wider than the 97 % one', () => {
    const width = (coverage: number) => {
      const [min, max] = calibratedWindow(constructed, coverage);
      return max - min;
    };
    expect(width(TARGET_COVERAGE.Low)).toBeLessThanOrEqual(width(TARGET_COVERAGE.Medium));
    expect(width(TARGET_COVERAGE.Medium)).toBeLessThanOrEqual(width(TARGET_COVERAGE.High));
    expect(width(TARGET_COVERAGE.Low)).toBeLessThan(width(TARGET_COVERAGE.High));
  });

  it('calibrates 97 % on the prefix when the code has fewer than 100 held-out deliveries, and 85 % on the code from 20', () => {
    // 25 held-out deliveries of the code, all 12 days late: enough to calibrate 85 % (20), not 97 % (100).
    const withHeldOut = (days: number[]) => stats({ postalCode: { ...code, calibration: hist(days) }, postalPrefix: prefix, country });
    const withLateCode = withHeldOut(repeat(12, 25));
    // The same 97 % window as with 25 ordinary held-out deliveries: the code's are not used.
    expect(calibratedWindow(withLateCode, TARGET_COVERAGE.High)).toEqual(
      calibratedWindow(withHeldOut(sample.slice(0, 25)), TARGET_COVERAGE.High),
    );
    expect(calibratedWindow(withLateCode, TARGET_COVERAGE.Low)[1]).toBeGreaterThanOrEqual(12);
  });

  it('grants High to the well-known code of this history, Medium once only 99 deliveries are held out anywhere', () => {
    expect(predictFromHistory(input(), constructed).confidence).toBe('High');
    const fewHeldOut = (l: LevelStatistics): LevelStatistics => ({ ...l, calibration: hist(repeat(3, 99)) });
    const sparse = stats({ postalCode: fewHeldOut(code), postalPrefix: fewHeldOut(prefix), country: fewHeldOut(country) });
    expect(predictFromHistory(input(), sparse).confidence).toBe('Medium');
  });
});

describe('postal codes with no history (the spread between codes of a prefix)', () => {
  // Each prefix: 3 busy codes and the quiet ones (none in history); transit = 4 + prefix effect
  // (sd 0.5) + code effect (sd 1) + noise (sd 0.8), in whole days. A new code is one more draw of the
  // code effect: its deliveries are not the prefix's busy codes' deliveries.
  const random = rng(20261122);
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const day = (mean: number) => Math.max(0, Math.round(mean + 0.8 * normal()));
  const prefixes = Array.from({ length: 30 }, (_, p) => ({ prefix: String(10 + p), mean: 4 + 0.5 * normal() }));
  const history: Delivery[] = prefixes.flatMap(({ prefix, mean }) =>
    [0, 1, 2].flatMap((c) => {
      const codeMean = mean + normal();
      return Array.from({ length: 300 }, () => ({ code: `${prefix}${c}`, prefix, days: day(codeMean) }));
    }),
  );
  const country = level(history.map((d) => d.days));
  const areaMoments = momentsOf(history);
  const statsFor = (prefix: string, code: number[] = []): TransitStatistics =>
    stats({ postalCode: level(code), postalPrefix: level(history.filter((d) => d.prefix === prefix).map((d) => d.days)), country, areaMoments }); // prettier-ignore

  it('gets a Low window that covers 85 % of the deliveries of new codes drawn with the prefix’s spread between codes', () => {
    let inside = 0;
    let drawn = 0;
    for (const { prefix, mean } of prefixes) {
      const [min, max] = windowDays(predictFromHistory(input(), statsFor(prefix)));
      for (let c = 0; c < 20; c += 1) {
        const codeMean = mean + normal();
        for (let i = 0; i < 20; i += 1) {
          const actual = day(codeMean);
          drawn += 1;
          if (actual >= min && actual <= max) inside += 1;
        }
      }
    }
    // 12,000 deliveries of 600 new codes: a point of sampling noise at most.
    expect(inside / drawn).toBeGreaterThanOrEqual(TARGET_COVERAGE.Low - 0.01);
    expect(predictFromHistory(input(), statsFor(prefixes[0].prefix)).confidence).toBe('Low');
  });

  it('gets a window wider than a busy code’s of the same prefix at the same target, and wider than the prefix’s pooled distribution alone gives', () => {
    const { prefix } = prefixes[0];
    const busy = history.filter((d) => d.code === `${prefix}0`).map((d) => d.days);
    // Compared at one coverage: the busy code is High (97 %) and the new one Low (85 %).
    const [newMin, newMax] = calibratedWindow(statsFor(prefix), TARGET_COVERAGE.Low);
    const [busyMin, busyMax] = calibratedWindow(statsFor(prefix, busy), TARGET_COVERAGE.Low);
    expect(newMax - newMin).toBeGreaterThan(busyMax - busyMin);
    const [pooledMin, pooledMax] = calibratedWindow({ ...statsFor(prefix), areaMoments: null }, TARGET_COVERAGE.Low);
    expect(newMax - newMin).toBeGreaterThan(pooledMax - pooledMin);
  });

  it('leaves almost none of the spread between codes to a code with plenty of history', () => {
    const { prefix } = prefixes[0];
    const busy = history.filter((d) => d.code === `${prefix}0`).map((d) => d.days);
    const betweenCodes = varianceComponents(areaMoments)?.betweenCodes ?? NaN;
    expect(betweenCodes).toBeGreaterThan(0.5); // the estimate of the code effect's variance, 1
    expect(unresolvedAreaVariance(statsFor(prefix))).toBeGreaterThanOrEqual(betweenCodes);
    expect(unresolvedAreaVariance(statsFor(prefix, busy))).toBeLessThan(0.05 * betweenCodes);
  });
});

describe('carrier conditions', () => {
  // Slow enough (8–10 business days) that no window touches today in these tests.
  const slow = (n: number) => Array.from({ length: n }, (_, i) => [8, 9, 9, 9, 10][i % 5]);
  /** The country, its cards arriving as usual up to yesterday (domain/recent-change.ts reportedUntil reads the cut there). */
  const reporting = level(
    slow(20_000),
    Array.from({ length: 30 * 10 }, (_, i): [number, number] => [12 + (i % 30), slow(5)[i % 5]]),
  );
  const slowStats = (overrides: Partial<TransitStatistics> = {}) =>
    stats({ postalCode: level(slow(200)), postalPrefix: level(slow(2_000)), country: reporting, ...overrides });

  /** `perDay` deliveries a day dispatched `from`..`to` calendar days ago, transit from `slow` plus `extra`. */
  const recentDays = (from: number, to: number, perDay: number, extra: number): Array<[number, number]> =>
    Array.from({ length: (to - from + 1) * perDay }, (_, i) => [from + Math.floor(i / perDay), slow(5)[i % 5] + extra]);

  it('moves the window by a shift its area’s recent deliveries pin down, and keeps the level', () => {
    const normal = predictFromHistory(input(), slowStats());
    // Three deliveries a day dispatched 20–41 days ago, each 2 business days slower than the norm.
    const slowed = predictFromHistory(input(), slowStats({ postalPrefix: level(slow(2_000), recentDays(20, 41, 3, 2)) }));
    const [min, max] = windowDays(normal);
    expect(windowDays(slowed)).toEqual([min + 2, max + 2]);
    expect(slowed.confidence).toBe('High');
  });

  it('moves the window earlier by a shift to faster transit', () => {
    const normal = predictFromHistory(input(), slowStats());
    const faster = predictFromHistory(input(), slowStats({ postalPrefix: level(slow(2_000), recentDays(15, 41, 3, -2)) }));
    const [min, max] = windowDays(normal);
    expect(windowDays(faster)).toEqual([min - 2, max - 2]);
  });

  it('moves the start by the lowest plausible shift and the end by the highest, and is at most Medium, when unsure of its size', () => {
    const normal = predictFromHistory(input(), slowStats());
    // Twelve deliveries, half 2 and half 3 days slower: the data cannot tell 2 from 3.
    const recent: Array<[number, number]> = [...repeat(11, 6), ...repeat(12, 6)].map((d, i) => [25 + i, d]);
    const unsure = predictFromHistory(input(), slowStats({ postalPrefix: level(slow(2_000), recent) }));
    const [min, max] = windowDays(normal);
    const [uMin, uMax] = windowDays(unsure);
    expect(uMin).toBeLessThanOrEqual(min + 2);
    expect(uMax).toBeGreaterThanOrEqual(max + 3);
    expect(unsure.confidence).toBe('Medium');
  });

  it('never gives High where a delay is declared', () => {
    expect(predictFromHistory(input(), slowStats()).confidence).toBe('High');
    expect(predictFromHistory(input(), slowStats({ operatorDelays: [{ postalPrefix: null, delayDays: 1, until: null }] })).confidence).toBe('Low'); // prettier-ignore
  });

  it('ignores a recent change measured on fewer than MIN_SHIFT_DELIVERIES deliveries', () => {
    const fewRecent = slowStats({
      postalPrefix: level(
        slow(2_000),
        repeat(14, MIN_SHIFT_DELIVERIES - 1).map((d, i) => [20 + i, d]),
      ),
    });
    expect(predictFromHistory(input(), fewRecent)).toEqual(predictFromHistory(input(), slowStats()));
  });

  it('ignores recent deliveries that follow the norm, however many', () => {
    const same = slowStats({ postalPrefix: level(slow(2_000), recentDays(16, 41, 5, 0)) });
    expect(predictFromHistory(input(), same)).toEqual(predictFromHistory(input(), slowStats()));
  });

  it('moves the window by an operator delay for the country until its end date, inclusive, widened by a third of it each side', () => {
    const delayed = slowStats({ operatorDelays: [{ postalPrefix: null, delayDays: 3, until: '2026-11-23' }] });
    const [min, max] = windowDays(predictFromHistory(input({}, '2026-11-23'), slowStats()));
    expect(windowDays(predictFromHistory(input({}, '2026-11-23'), delayed))).toEqual([min + 3 - 1, max + 3 + 1]);
  });

  it('widens the window by at least a day each side for a declared delay of one day, by two for six days', () => {
    const delayed = (days: number) => slowStats({ operatorDelays: [{ postalPrefix: null, delayDays: days, until: null }] });
    const [min, max] = windowDays(predictFromHistory(input(), slowStats()));
    expect(windowDays(predictFromHistory(input(), delayed(1)))).toEqual([min, max + 2]);
    expect(windowDays(predictFromHistory(input(), delayed(6)))).toEqual([min + 4, max + 8]);
  });

  it('stops applying an operator delay the day after its end date', () => {
    const delayed = slowStats({ operatorDelays: [{ postalPrefix: null, delayDays: 3, until: '2026-11-23' }] });
    expect(predictFromHistory(input({}, '2026-11-24'), delayed)).toEqual(predictFromHistory(input({}, '2026-11-24'), slowStats()));
  });

  it('applies a prefix delay only to that prefix, and the worst of overlapping delays once', () => {
    const otherPrefix = slowStats({ operatorDelays: [{ postalPrefix: '69', delayDays: 3, until: null }] });
    expect(predictFromHistory(input(), otherPrefix)).toEqual(predictFromHistory(input(), slowStats()));
    const overlapping = slowStats({
      operatorDelays: [
        { postalPrefix: '75', delayDays: 2, until: null },
        { postalPrefix: null, delayDays: 1, until: null },
      ],
    });
    const [min, max] = windowDays(predictFromHistory(input(), slowStats()));
    expect(windowDays(predictFromHistory(input(), overlapping))).toEqual([min + 2 - 1, max + 2 + 1]);
  });
});

describe('carrier conditions without history (the default table)', () => {
  const noHistory = (operatorDelays: TransitStatistics['operatorDelays'] = []) =>
    stats({ postalCode: level([]), postalPrefix: level([]), country: level([]), operatorDelays });

  it('moves the default table’s window by a declared delay, widened by a third of it each side, as a history window is', () => {
    // FR's table says 2–4 business days, a Low window 2 more at the late end: 2–6.
    expect(windowDays(predictFromHistory(input(), noHistory()))).toEqual([2, 6]);
    expect(windowDays(predictFromHistory(input(), noHistory([{ postalPrefix: null, delayDays: 3, until: null }])))).toEqual([2 + 3 - 1, 6 + 3 + 1]); // prettier-ignore
    expect(predictFromHistory(input(), noHistory([{ postalPrefix: null, delayDays: 3, until: null }])).confidence).toBe('Low');
  });

  it('applies a prefix delay without history only to that prefix, and not after its end date', () => {
    expect(predictFromHistory(input(), noHistory([{ postalPrefix: '69', delayDays: 3, until: null }]))).toEqual(predict(input()));
    expect(windowDays(predictFromHistory(input(), noHistory([{ postalPrefix: '75', delayDays: 2, until: null }])))).toEqual([2 + 2 - 1, 6 + 2 + 1]); // prettier-ignore
    const ended = noHistory([{ postalPrefix: null, delayDays: 3, until: '2026-11-19' }]);
    expect(predictFromHistory(input(), ended)).toEqual(predict(input()));
  });

  it('moves the default table’s window when the country has too little history to replace it', () => {
    const sparse = stats({ postalCode: level([]), postalPrefix: level([]), country: level(repeat(3, 29)), operatorDelays: [{ postalPrefix: null, delayDays: 3, until: null }] }); // prettier-ignore
    expect(windowDays(predictFromHistory(input(), sparse))).toEqual([4, 10]);
  });

  it('never lets an exception window end before the delayed default window', () => {
    const delayed = noHistory([{ postalPrefix: null, delayDays: 6, until: null }]);
    const inTransit = predictFromHistory(input(), delayed);
    const exception = predictFromHistory(input({ status: 'exception', exceptionReason: 'failed_attempt' }), delayed);
    expect(exception.window.max >= inTransit.window.max).toBe(true);
    expect(exception.window.max > predict(input({ status: 'exception', exceptionReason: 'failed_attempt' })).window.max).toBe(true);
  });
});

describe('status narrowing (the foundation’s rules)', () => {
  it('is the delivery date once delivered', () => {
    const delivered = predictFromHistory(input({ status: 'delivered', statusSince: '2026-11-24T15:00:00.000Z' }, '2026-11-25'), stats());
    expect(delivered).toEqual({ window: { min: '2026-11-24', max: '2026-11-24' }, confidence: 'High' });
  });

  it('is today when out for delivery today', () => {
    const out = predictFromHistory(input({ status: 'out_for_delivery', statusSince: '2026-11-24T07:00:00.000Z' }, '2026-11-24'), stats());
    expect(out.window).toEqual({ min: '2026-11-24', max: '2026-11-24' });
  });

  it('widens on an exception, never ending before the history’s window', () => {
    const slowHistory = stats({
      postalCode: level(repeat(12, 200)),
      postalPrefix: level(repeat(12, 2_000)),
      country: level(repeat(12, 20_000)),
    });
    const inTransit = predictFromHistory(input(), slowHistory);
    const exception = predictFromHistory(input({ status: 'exception', exceptionReason: 'failed_attempt' }), slowHistory);
    expect(exception.confidence).toBe('Low');
    expect(exception.window.max >= inTransit.window.max).toBe(true);
  });
});

describe('window invariants', () => {
  const statuses: DispatchState['status'][] = ['dispatched', 'in_transit', 'out_for_delivery', 'exception'];
  const variants = [
    stats(),
    stats({ postalCode: level([]) }),
    stats({ postalCode: level(repeat(1, 3)), postalPrefix: level(repeat(7, 30)) }),
  ];

  it('never starts before today and never ends before it starts', () => {
    for (const statistics of variants)
      for (const status of statuses)
        for (let offset = 0; offset <= 30; offset += 1) {
          const today = new Date(Date.parse(TODAY) + offset * 86_400_000).toISOString().slice(0, 10);
          const { window } = predictFromHistory(input({ status, statusSince: DISPATCHED_AT, exceptionReason: 'postal_delay' }, today), statistics); // prettier-ignore
          expect(window.min >= today).toBe(true);
          expect(window.min <= window.max).toBe(true);
        }
  });
});
