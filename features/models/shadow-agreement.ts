import { InputError } from '../../kernel/errors/errors.js';
import { wilsonInterval } from './comparison.stats.js';
import type { ShadowPairRow } from './comparison.store.js';
import { DEFAULT_TOLERANCE, MAX_TOLERANCE, outputsAgree, outputsOf } from './output-agreement.js';

/** The most shadow/primary pairs compared per version: what bounds the responses one comparison reads and parses. */
export const MAX_COMPARED_PAIRS = 5_000;

/** The `tolerance` query parameter: a number from 0 to MAX_TOLERANCE, DEFAULT_TOLERANCE when absent; anything else is a 400. */
export function toleranceOf(value: unknown): number {
  if (value === undefined) return DEFAULT_TOLERANCE;
  const tolerance = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (!Number.isFinite(tolerance) || tolerance < 0 || tolerance > MAX_TOLERANCE) {
    throw new InputError(`tolerance: a number from 0 to ${MAX_TOLERANCE}.`, [{ field: 'tolerance', message: `not a number from 0 to ${MAX_TOLERANCE}` }]);
  }
  return tolerance;
}

/** How often a shadow version's outputs agreed with its primaries', over the pairs read (at most MAX_COMPARED_PAIRS, oldest first). */
export function presentAgreement(pairs: ShadowPairRow[], tolerance: number) {
  const compared = pairs.slice(0, MAX_COMPARED_PAIRS);
  const agreed = compared.filter((pair) => outputsAgree(outputsOf(pair.primary_response), outputsOf(pair.shadow_response), tolerance)).length;
  return {
    compared: compared.length,
    agreed,
    rate: compared.length ? agreed / compared.length : null,
    interval: wilsonInterval(agreed, compared.length),
    tolerance,
    max_compared: MAX_COMPARED_PAIRS,
    truncated: pairs.length > MAX_COMPARED_PAIRS,
  };
}
