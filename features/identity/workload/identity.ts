import type { WorkloadGrant } from '../../../kernel/config/workload.js';

/** A workload a verified subject token names: a key that identifies it, how people read it, and what the mappings grant it. */
export interface WorkloadIdentity {
  /** Stable across its tokens: (issuer, claim, value) or (namespace, ServiceAccount). */
  key: string;
  label: string;
  grants: WorkloadGrant[];
}

/** One kind of subject token: whether it is of this kind (unverified), then the workload it proves. */
export interface SubjectTokenKind {
  accepts(unverified: Record<string, unknown>): boolean;
  /** The account that failed attempts are counted on (with the caller's address). */
  account(unverified: Record<string, unknown>): string;
  /** Verifies the token (`unverified` is its claims as read before any check) and names its workload. */
  identify(token: string, unverified: Record<string, unknown>): Promise<WorkloadIdentity>;
}
