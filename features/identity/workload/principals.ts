import type { Db } from '../../../infra/db/database.js';
import { sha256 } from '../../../infra/crypto/random.js';
import type { WorkloadRole } from '../../../kernel/config/workload.js';
import { OAuthError } from '../../../kernel/errors/errors.js';
import type { UsersStore } from '../users.store.js';
import type { WorkloadIdentity } from './identity.js';

/** Where a workload's service user is found again: its e-mail, derived from the workload's key (never a mailbox). */
export const workloadEmail = (identity: Pick<WorkloadIdentity, 'key'>) => `workload-${sha256(identity.key).slice(0, 32)}@workload.didyma.invalid`;

/**
 * The service user each workload acts as, made at its first exchange and
 * made a member of the workspace with the mapped role at each one (so a
 * changed mapping's role applies at the next exchange). Staff can stop a
 * workload by deactivating its user.
 */
export class WorkloadPrincipals {
  constructor(
    private readonly db: Db,
    private readonly users: UsersStore,
  ) {}

  memberFor(identity: WorkloadIdentity, workspaceId: number, role: WorkloadRole): Promise<number> {
    const email = workloadEmail(identity);
    return this.db.transaction(async (trx) => {
      // Two first exchanges of one workload at once: the second takes the user the first made.
      const user = (await this.users.byEmail(trx, email)) ?? (await this.users.insertOrFind(trx, { email, password_hash: null, name: identity.label.slice(0, 200), is_service: true }));
      if (!user.is_active) throw new OAuthError(403, 'access_denied', `The user of ${identity.label} has been deactivated.`);
      await this.users.upsertMembership(trx, user.id, workspaceId, role);
      return user.id;
    });
  }
}
