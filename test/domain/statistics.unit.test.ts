// Transit-time histogram statistics (domain/statistics.ts) that the prediction model builds on:
// here, adding a normal area effect to a histogram (the spread a new postal code's history leaves open).
import { describe, it, expect } from '@jest/globals';
import { addNormalNoise, normalCdf, total } from '../../domain/statistics.js';

const mean = (h: readonly number[]) => h.reduce((sum, w, d) => sum + w * d, 0) / total(h);
const variance = (h: readonly number[]) => h.reduce((sum, w, d) => sum + w * (d - mean(h)) ** 2, 0) / total(h);

describe('normalCdf', () => {
  it('is ½ at 0 and the standard normal’s 97.5 % at 1.96', () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 7);
    expect(normalCdf(1.96)).toBeCloseTo(0.975, 4);
    expect(normalCdf(-1.96)).toBeCloseTo(0.025, 4);
  });
});

describe('addNormalNoise', () => {
  it('returns the histogram unchanged for variance 0', () => {
    expect(addNormalNoise([0, 1, 3, 1], 0)).toEqual([0, 1, 3, 1]);
  });

  it('keeps the total and the mean and adds the variance (plus the rounding’s twelfth of a day²)', () => {
    const h = [0, 0, 0, 0, 0, 0, 2, 5, 2];
    const spread = addNormalNoise(h, 1.5);
    expect(total(spread)).toBeCloseTo(total(h), 9);
    expect(mean(spread)).toBeCloseTo(mean(h), 3);
    expect(variance(spread)).toBeCloseTo(variance(h) + 1.5 + 1 / 12, 1);
  });

  it('counts a sum below 0 as 0 days', () => {
    const spread = addNormalNoise([1], 4);
    expect(total(spread)).toBeCloseTo(1, 9);
    expect(spread[0]).toBeCloseTo(normalCdf(0.5 / 2), 6);
  });
});
