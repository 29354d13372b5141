import type { Db } from '../../infra/db/database.js';
import type { SecretBox } from '../../infra/crypto/secrets.js';
import { ConflictError, NotFoundError } from '../../kernel/errors/errors.js';
import type { Principal } from '../auth/principal.js';
import type { Page } from '../../infra/db/keyset.js';
import type { StorageClasses } from '../../infra/storage/classes.js';
import type { StorageBackend } from '../../infra/storage/backend.js';
import type { UrlPolicy } from '../../infra/net/url-policy.js';
import { fullInit, maskedInit, sealedKeys, sealSecrets, splitSecrets } from '../deployments/secrets.js';
import type { StorageConfigRow, StorageConfigsStore } from './store.js';
import { announceCommitted } from '../../infra/db/change-feed.js';
import { clusterStatus } from '../deployments/cluster-state.js';

export interface StorageInput {
  storage_key: string;
  storage_class: string;
  connector_init: unknown;
}

/**
 * Storage configurations of a workspace (supervisor operations). Requests
 * change rows only; in Kubernetes mode the reconciler applies them to the
 * cluster after the commit (as for deployments).
 */
export class StorageConfigsService {
  constructor(
    private readonly db: Db,
    private readonly stores: { storageConfigs: StorageConfigsStore },
    private readonly classes: StorageClasses,
    private readonly box: SecretBox,
    private readonly policy: UrlPolicy,
    /** Kubernetes mode: responses show each configuration's `cluster_state`. */
    private readonly clusterManaged = false,
  ) {}

  /** Validates the class and its init, checks the bucket is reachable with those credentials, then stores it. */
  async create(principal: Principal, input: StorageInput) {
    const workspace = principal.workspace!;
    const storageClass = this.classes.get(input.storage_class);
    const init = storageClass.validateInit(input.connector_init);
    // The platform will call this endpoint: the same outbound URL policy as for model servers.
    if (typeof init.endpoint === 'string') await this.policy.checkUrl(init.endpoint, 'connector_init.endpoint');
    if (await this.stores.storageConfigs.liveByKey(this.db, workspace.id, input.storage_key)) {
      throw new ConflictError(`A storage configuration "${input.storage_key}" exists in this workspace.`);
    }
    await this.classes.backend(input.storage_class, init).check();
    const { plain, secrets } = splitSecrets(init, storageClass.secretKeys);
    const row = await this.stores.storageConfigs.insert(this.db, {
      workspace_id: workspace.id,
      storage_key: input.storage_key,
      storage_class: input.storage_class,
      connector_init: plain,
      secrets_sealed: sealSecrets(this.box, secrets),
      created_by_id: principal.user.id,
    });
    announceCommitted(this.db, 'storage_configs', [String(row.id)]);
    return this.present(row, workspace.name);
  }

  async list(principal: Principal, page: Page) {
    const workspace = principal.workspace!;
    const { rows, total, next } = await this.stores.storageConfigs.pageLive(this.db, workspace.id, page);
    const items = rows.map((r) => ({ storage_key: r.storage_key, storage_class: r.storage_class, workspace: workspace.name, ...this.cluster(r) }));
    return { items, total, next };
  }

  async get(principal: Principal, key: string) {
    return this.present(await this.live(principal, key), principal.workspace!.name);
  }

  /** De-registers: no further uploads; stored files stay readable. */
  async remove(principal: Principal, key: string) {
    const row = await this.live(principal, key);
    await this.stores.storageConfigs.markDeleted(this.db, row.id);
    announceCommitted(this.db, 'storage_configs', [String(row.id)]);
  }

  async live(principal: Principal, key: string): Promise<StorageConfigRow> {
    const row = await this.stores.storageConfigs.liveByKey(this.db, principal.workspace!.id, key);
    if (!row) throw new NotFoundError(`Storage configuration "${key}" not found.`);
    return row;
  }

  backendOf(row: StorageConfigRow): StorageBackend {
    return this.classes.backend(row.storage_class, fullInit(row.connector_init, row.secrets_sealed, this.box));
  }

  private present(row: StorageConfigRow, workspace: string) {
    return {
      storage_key: row.storage_key,
      storage_class: row.storage_class,
      connector_init: maskedInit(row.connector_init, sealedKeys(this.box, row.secrets_sealed)),
      workspace,
      ...this.cluster(row),
    };
  }

  private cluster(row: StorageConfigRow) {
    return this.clusterManaged ? clusterStatus(row) : {};
  }
}
