// Small, exact statistics on transit-time histograms, for the prediction model
// (domain/prediction-model.ts). Transit is a whole number of business days, so a distribution is a
// histogram: `h[d]` = how many deliveries (or how much probability) took d business days. Everything
// here is pure and works on plain arrays, which travel through Temporal activities unchanged.

/** h[d] = weight of transit d business days (d = 0, 1, 2, …). */
export type Histogram = readonly number[];

export function total(h: Histogram): number {
  let sum = 0;
  for (const weight of h) sum += weight;
  return sum;
}

/** Weighted sum a·x + b·y of two histograms (either may be shorter). */
export function combine(x: Histogram, a: number, y: Histogram, b: number): number[] {
  const length = Math.max(x.length, y.length);
  return Array.from({ length }, (_, d) => a * (x[d] ?? 0) + b * (y[d] ?? 0));
}

/** The histogram scaled to total 1 (an empty one stays empty). */
export function normalise(h: Histogram): number[] {
  const sum = total(h);
  return sum > 0 ? h.map((weight) => weight / sum) : [];
}

/** The smallest d with P(X ≤ d) ≥ p, for a histogram of any total (null when empty). */
export function quantile(h: Histogram, p: number): number | null {
  const sum = total(h);
  if (sum <= 0) return null;
  let cumulative = 0;
  for (let d = 0; d < h.length; d += 1) {
    cumulative += h[d];
    if (cumulative >= p * sum - 1e-9) return d;
  }
  return h.length - 1;
}

/**
 * The shortest interval [lo, hi] of whole days holding at least `mass` (0..1) of the histogram;
 * among equally short ones, the one holding the most. Transit times have a long late tail, so the
 * shortest interval is narrower than the central one for the same coverage.
 */
export function shortestInterval(h: Histogram, mass: number): [number, number] {
  const sum = total(h);
  if (sum <= 0) throw new RangeError('empty histogram');
  const need = mass * sum - 1e-9;
  let best: [number, number] = [0, h.length - 1];
  let bestMass = -1;
  for (let lo = 0; lo < h.length; lo += 1) {
    let inside = 0;
    for (let hi = lo; hi < h.length; hi += 1) {
      inside += h[hi];
      if (inside >= need) {
        const shorter = hi - lo < best[1] - best[0];
        if (shorter || (hi - lo === best[1] - best[0] && inside > bestMass)) {
          best = [lo, hi];
          bestMass = inside;
        }
        break;
      }
    }
  }
  return best;
}

/**
 * Split-conformal correction of an interval [lo, hi] on held-out observations (a histogram of
 * counts): the score of an observation y is max(lo − y, y − hi), ≤ 0 inside the interval; the
 * correction is the ⌈(n + 1)(1 − α)⌉-th smallest score, so [lo − c, hi + c] covers a new
 * exchangeable observation with probability ≥ 1 − α. Null when n is too small for that rank.
 */
export function conformalCorrection(interval: [number, number], heldOut: Histogram, coverage: number): number | null {
  const [lo, hi] = interval;
  const scores: Array<[score: number, count: number]> = [];
  for (let y = 0; y < heldOut.length; y += 1) if (heldOut[y] > 0) scores.push([Math.max(lo - y, y - hi), heldOut[y]]);
  scores.sort((a, b) => a[0] - b[0]);
  const n = total(heldOut);
  const rank = Math.ceil((n + 1) * coverage);
  if (n === 0 || rank > n) return null;
  let seen = 0;
  for (const [score, count] of scores) {
    seen += count;
    if (seen >= rank) return score;
  }
  return null;
}

/** P(X ≥ k) for X ~ Binomial(n, p), summed in log space so n in the thousands does not underflow. */
export function binomialUpperTail(n: number, k: number, p: number): number {
  if (k <= 0) return 1;
  if (k > n) return 0;
  let logPmf = n * Math.log(1 - p); // log P(X = 0)
  let tail = 0;
  for (let i = 0; i < n; i += 1) {
    // P(X = i + 1) = P(X = i) · (n − i)/(i + 1) · p/(1 − p)
    logPmf += Math.log((n - i) / (i + 1)) + Math.log(p / (1 - p));
    if (i + 1 >= k) tail += Math.exp(logPmf);
  }
  return Math.min(1, tail);
}

/**
 * Sums over a country's deliveries that a nested one-way random-effects model (transit = country
 * mean + prefix effect + postal-code effect + noise) needs, as SQL reads them in one pass:
 * with x a delivery's transit, s_c and n_c a postal code's sum and count, s_p and n_p its prefix's.
 */
export interface AreaMoments {
  /** N, Σx and Σx² over all deliveries. */
  deliveries: number;
  sum: number;
  sumOfSquares: number;
  /** Σ s_c²/n_c over postal codes and Σ s_p²/n_p over prefixes. */
  codeSquares: number;
  prefixSquares: number;
  /** Σ_p (Σ_{c∈p} n_c²)/n_p, Σ_c n_c² and Σ_p n_p² (the unbalanced-design coefficients). */
  codeWithinPrefixWeights: number;
  codeWeights: number;
  prefixWeights: number;
  codes: number;
  prefixes: number;
}

/** Variances (business days²) of transit within a postal code, between codes of a prefix, between prefixes. */
export interface VarianceComponents {
  withinCode: number;
  /** Null when there are too few codes (or prefixes) to tell. */
  betweenCodes: number | null;
  betweenPrefixes: number | null;
}

/**
 * Method-of-moments (ANOVA) estimates of the variance components from their sums of squares,
 * for unbalanced nested groups: E[within SS] = (N − C)σ², E[codes-in-prefix SS] = (C − P)σ² +
 * (N − Σ_p Σ_c n_c²/n_p)τ_c², E[prefix SS] = (P − 1)σ² + (Σ_p Σ_c n_c²/n_p − Σ_c n_c²/N)τ_c² +
 * (N − Σ n_p²/N)τ_p². Negative estimates (groups closer than noise alone would put them) are 0.
 */
export function varianceComponents(m: AreaMoments): VarianceComponents | null {
  const n = m.deliveries;
  if (n - m.codes < 1) return null;
  const withinCode = (m.sumOfSquares - m.codeSquares) / (n - m.codes);
  const codeCoefficient = n - m.codeWithinPrefixWeights;
  const betweenCodes =
    m.codes - m.prefixes >= 1 && codeCoefficient > 0
      ? Math.max(0, (m.codeSquares - m.prefixSquares - (m.codes - m.prefixes) * withinCode) / codeCoefficient)
      : null;
  const prefixCoefficient = n - m.prefixWeights / n;
  const prefixSs = m.prefixSquares - (m.sum * m.sum) / n;
  const codeShare = (m.codeWithinPrefixWeights - m.codeWeights / n) * (betweenCodes ?? 0);
  const betweenPrefixes =
    m.prefixes >= 2 && prefixCoefficient > 0
      ? Math.max(0, (prefixSs - (m.prefixes - 1) * withinCode - codeShare) / prefixCoefficient)
      : null;
  return { withinCode: Math.max(0, withinCode), betweenCodes, betweenPrefixes };
}

/** Φ(x), the standard normal distribution function (Abramowitz–Stegun 7.1.26, error below 1.5e-7). */
export function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-z * z);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/**
 * The distribution of X + δ, X from the histogram and δ ~ Normal(0, variance) independent of it,
 * rounded to whole days (δ falls on day k with P(k − ½ < δ ≤ k + ½)); a sum below 0 counts as 0.
 * Variance 0 returns the histogram unchanged.
 */
export function addNormalNoise(h: Histogram, variance: number): number[] {
  if (!(variance > 0)) return [...h];
  const sd = Math.sqrt(variance);
  const reach = Math.ceil(5 * sd);
  const shifts = Array.from({ length: 2 * reach + 1 }, (_, i) => i - reach);
  // Normalised, so the truncation at 5 sd and the approximation of Φ do not lose mass.
  const weights = normalise(shifts.map((k) => normalCdf((k + 0.5) / sd) - normalCdf((k - 0.5) / sd)));
  const out = Array<number>(h.length + reach).fill(0);
  h.forEach((weight, d) => {
    shifts.forEach((k, i) => {
      out[Math.max(0, d + k)] += weight * weights[i];
    });
  });
  return out;
}
