// A constructed transit distribution for the recent-shift tests (test/domain/recent-shift*.unit.test.ts):
// a discretised log-normal body with a late tail, placed exactly (2,000 quantiles, no sampling), so
// a property over network shapes reads the shape and not a draw's noise.

/** A discretised log-normal body of median `median` business days and spread `sigma`, and a late tail of weight `tail`. */
export function transitDistribution(median: number, sigma: number, tail: number): number[] {
  const p = Array<number>(40).fill(0);
  for (let i = 0; i < 2000; i += 1) {
    const z = Math.SQRT2 * inverseErf((2 * (i + 0.5)) / 2000 - 1);
    const days = Math.max(1, Math.round(median * Math.exp(sigma * z)));
    p[Math.min(39, days)] += (1 - tail) / 2000;
    p[Math.min(39, days + 4)] += tail / 2000;
  }
  return p;
}

/** erf⁻¹ by Giles' approximation: enough to place 2,000 quantiles of a normal. */
function inverseErf(x: number): number {
  let w = -Math.log((1 - x) * (1 + x));
  let p: number;
  if (w < 5) {
    w -= 2.5;
    p = [2.81022636e-8, 3.43273939e-7, -3.5233877e-6, -4.39150654e-6, 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941].reduce((acc, c) => acc * w + c, 0); // prettier-ignore
  } else {
    w = Math.sqrt(w) - 3;
    p = [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682].reduce((acc, c) => acc * w + c, 0); // prettier-ignore
  }
  return p * x;
}
