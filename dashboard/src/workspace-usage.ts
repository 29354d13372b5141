import type { WorkloadCount } from '../../features/invocations/store.js';

/** A workspace's invocations running and waiting now, beside its limits. */
export interface WorkspaceUsage {
  inFlight: number;
  queued: number;
}

/** The store's counts per model version, summed per workspace name; a workspace with none has no entry. */
export function usageByWorkspace(counts: readonly WorkloadCount[]): Map<string, WorkspaceUsage> {
  const usage = new Map<string, WorkspaceUsage>();
  for (const count of counts) {
    const entry = usage.get(count.workspace) ?? { inFlight: 0, queued: 0 };
    if (count.status === 'QUEUED') entry.queued += Number(count.n);
    else entry.inFlight += Number(count.n);
    usage.set(count.workspace, entry);
  }
  return usage;
}
