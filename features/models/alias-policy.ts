import { createHash } from 'node:crypto';
import { InputError } from '../../kernel/errors/errors.js';
import { guardsInput, type PolicyGuards } from './alias-guards.js';

/** What a policy hashes to keep a caller on one version: the session (a retried open is the same session) or its user. */
export type Sticky = 'session' | 'user';

/** A policy by version names: the weighted versions (the alias's own first), the shadows; what the API answers and the history keeps. */
export interface PolicySnapshot {
  sticky: Sticky;
  weights: Array<{ version: string; weight: number }>;
  shadows: string[];
  /** Present only when the policy has guards, so a policy without them reads as it did before guards existed. */
  guards?: PolicyGuards;
}

/** A policy asked for, checked for shape: every rule that needs no database. */
export function policyInput(body: unknown): PolicySnapshot {
  const given = (body ?? {}) as Record<string, unknown>;
  const sticky = given.sticky ?? 'session';
  if (sticky !== 'session' && sticky !== 'user') throw invalid('sticky', 'sticky: "session" or "user".');
  if (!Array.isArray(given.weights) || !given.weights.length) throw invalid('weights', 'weights: required, a non-empty list of {version, weight}.');
  const weights = given.weights.map((entry: unknown, i) => weightOf(entry, i));
  const shadows = given.shadows ?? [];
  if (!Array.isArray(shadows) || shadows.some((v) => typeof v !== 'string' || !v)) throw invalid('shadows', 'shadows: a list of versions.');
  const weighted = new Set<string>();
  weights.forEach(({ version }, i) => {
    if (weighted.has(version)) throw invalid(`weights[${i}].version`, `weights[${i}].version: ${version} is weighted twice.`);
    weighted.add(version);
  });
  const shadowed = new Set<string>();
  (shadows as string[]).forEach((version, i) => {
    if (weighted.has(version)) throw invalid(`shadows[${i}]`, `shadows[${i}]: ${version} is also weighted; a version is either weighted or a shadow.`);
    if (shadowed.has(version)) throw invalid(`shadows[${i}]`, `shadows[${i}]: ${version} is a shadow twice.`);
    shadowed.add(version);
  });
  const total = weights.reduce((sum, { weight }) => sum + weight, 0);
  if (total !== 100) throw invalid('weights', `weights: they sum to ${total}, not 100.`);
  const guards = guardsInput(given.guards);
  return { sticky, weights, shadows: shadows as string[], ...(guards && { guards }) };
}

function weightOf(entry: unknown, i: number): { version: string; weight: number } {
  const { version, weight } = (entry ?? {}) as Record<string, unknown>;
  if (typeof version !== 'string' || !version) throw invalid(`weights[${i}].version`, `weights[${i}].version: required.`);
  if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 0 || weight > 100) {
    throw invalid(`weights[${i}].weight`, `weights[${i}].weight: an integer from 0 to 100.`);
  }
  return { version, weight };
}

const invalid = (field: string, message: string) => new InputError(message, [{ field, message }]);

/** A weighted target as the hash sees it: a version's id and its weight. */
export interface WeightedTarget {
  modelId: number;
  weight: number;
}

/**
 * The target a new session runs: a bucket 0..99 from SHA-256 of the alias and
 * the sticky key, against the cumulative weights in the order given (the
 * primary first, then by model id), so the same key always picks the same one.
 */
export function pickTarget(aliasId: number, stickyKey: string, targets: WeightedTarget[]): number {
  const bucket = bucketOf(`${aliasId}:${stickyKey}`);
  let cumulative = 0;
  for (const target of targets) {
    cumulative += target.weight;
    if (bucket < cumulative) return target.modelId;
  }
  // Weights sum to 100 (checked on write), so this is reached only if they did not.
  return targets.find((t) => t.weight > 0)?.modelId ?? targets[0]!.modelId;
}

/** 0..99, uniform to within 2^-48: the first six bytes of the digest, modulo 100. */
export function bucketOf(key: string): number {
  return createHash('sha256').update(key).digest().readUIntBE(0, 6) % 100;
}

/**
 * The policy once the alias moves to `to`: the primary's weight goes with the
 * alias; a weighted target it moves to adds its weight to the primary's, a
 * shadow it moves to stops being one; every other target, and the guards, stay.
 */
export function policyAfterMove(policy: PolicySnapshot, to: string): PolicySnapshot {
  const [primary, ...others] = policy.weights;
  const joining = others.find((w) => w.version === to);
  return {
    ...policy,
    weights: [{ version: to, weight: primary!.weight + (joining?.weight ?? 0) }, ...others.filter((w) => w.version !== to)],
    shadows: policy.shadows.filter((v) => v !== to),
  };
}
