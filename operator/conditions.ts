import { isDeepStrictEqual } from 'node:util';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export type ConditionUpdate = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

export interface ResourceStatus {
  observedGeneration?: number;
  conditions?: Condition[];
}

/**
 * The status after a reconcile: the given conditions, each keeping its
 * lastTransitionTime unless its status changed, so reconciling again without
 * a change produces exactly the same status (and no write).
 */
export function nextStatus(current: ResourceStatus | undefined, generation: number, updates: readonly ConditionUpdate[], now: string): Required<ResourceStatus> {
  const previous = new Map((current?.conditions ?? []).map((condition) => [condition.type, condition]));
  const conditions = updates.map((update): Condition => {
    const before = previous.get(update.type);
    const lastTransitionTime = before && before.status === update.status ? before.lastTransitionTime : now;
    return { type: update.type, status: update.status, reason: update.reason, message: update.message.slice(0, 32768), lastTransitionTime, observedGeneration: generation };
  });
  return { observedGeneration: generation, conditions };
}

export const sameStatus = (a: ResourceStatus | undefined, b: ResourceStatus) => isDeepStrictEqual({ observedGeneration: a?.observedGeneration, conditions: a?.conditions ?? [] }, b);

/** Conditions whose status or reason changed: each deserves an Event. */
export function transitions(current: ResourceStatus | undefined, next: Required<ResourceStatus>): Condition[] {
  const previous = new Map((current?.conditions ?? []).map((condition) => [condition.type, condition]));
  return next.conditions.filter((condition) => {
    const before = previous.get(condition.type);
    return !before || before.status !== condition.status || before.reason !== condition.reason;
  });
}
