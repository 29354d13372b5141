// 95% intervals for the comparison of an alias's versions, computed from the
// aggregates the database returns (counts, means, standard deviations).

/** The standard normal's 97.5% quantile: a two-sided 95% interval. */
const Z_95 = 1.959963984540054;

/** Student's t 97.5% quantiles for 1 to 30 degrees of freedom. */
const T_95 = [
  12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.13145,
  2.119905, 2.109816, 2.100922, 2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.04523, 2.042272,
];

export interface Interval {
  low: number;
  high: number;
  method: 'wilson' | 'student-t';
}

/** Wilson score interval of a proportion `successes / n`; null when n is 0. */
export function wilsonInterval(successes: number, n: number): Interval | null {
  if (n <= 0) return null;
  const p = successes / n;
  const z2 = Z_95 * Z_95;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (Z_95 / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half), method: 'wilson' };
}

/** Student's t 97.5% quantile: the table up to 30 degrees of freedom, a Cornish-Fisher expansion beyond (within 1e-5 there). */
export function studentT975(degrees: number): number {
  if (degrees <= T_95.length) return T_95[degrees - 1]!;
  const z = Z_95;
  const g1 = (z ** 3 + z) / 4;
  const g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96;
  const g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384;
  return z + g1 / degrees + g2 / degrees ** 2 + g3 / degrees ** 3;
}

/** The t interval of a mean from n values with sample standard deviation `sd`; null under 2 values. */
export function meanInterval(mean: number, sd: number, n: number): Interval | null {
  if (n < 2) return null;
  const half = (studentT975(n - 1) * sd) / Math.sqrt(n);
  return { low: mean - half, high: mean + half, method: 'student-t' };
}
