import type { Db } from '../../infra/db/database.js';
import { InputError, NotFoundError } from '../../kernel/errors/errors.js';
import { randomToken, sha256 } from '../../infra/crypto/random.js';
import { API_TOKEN_PREFIX } from './authenticator.js';
import type { Principal } from '../auth/principal.js';
import type { ApiTokensStore } from './api-tokens.store.js';
import type { Page } from './workspaces.store.js';
import { requireWorkspaceAccess } from './access.js';
import { presentApiToken } from './present.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** API tokens: created by a supervisor (dashboard), used as Bearer, stored only as SHA-256. */
export class ApiTokensService {
  constructor(
    private readonly db: Db,
    private readonly store: ApiTokensStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** Returns the key once; only its hash is kept. */
  async create(principal: Principal, workspaceId: number, input: { name: string; expiration_date: string }) {
    await requireWorkspaceAccess(this.db, principal, workspaceId, 'supervisor');
    const name = input.name.trim();
    if (!name || name.length > 100) throw new InputError('name: 1 to 100 characters.');
    if (!DATE.test(input.expiration_date) || Number.isNaN(Date.parse(`${input.expiration_date}T00:00:00Z`))) {
      throw new InputError('expiration_date: expected a date YYYY-MM-DD.');
    }
    if (input.expiration_date < new Date(this.now()).toISOString().slice(0, 10)) throw new InputError('expiration_date: must not be in the past.');
    const key = `${API_TOKEN_PREFIX}${randomToken(32)}`;
    const row = await this.store.insert(this.db, {
      name,
      user_id: principal.user.id,
      workspace_id: workspaceId,
      token_hash: sha256(key),
      expiration_date: input.expiration_date,
    });
    return { key, token: presentApiToken(row) };
  }

  async list(principal: Principal, workspaceId: number, page: Page) {
    await requireWorkspaceAccess(this.db, principal, workspaceId, 'supervisor');
    const { rows, total, next } = await this.store.pageInWorkspace(this.db, workspaceId, page);
    return { items: rows.map(presentApiToken), total, next };
  }

  async get(principal: Principal, workspaceId: number, tokenId: number) {
    await requireWorkspaceAccess(this.db, principal, workspaceId, 'supervisor');
    const row = await this.store.inWorkspace(this.db, workspaceId, tokenId);
    if (!row) throw new NotFoundError('API token not found.');
    return presentApiToken(row);
  }

  async setActive(principal: Principal, workspaceId: number, tokenId: number, isActive: boolean) {
    await requireWorkspaceAccess(this.db, principal, workspaceId, 'supervisor');
    const row = await this.store.setActive(this.db, workspaceId, tokenId, isActive);
    if (!row) throw new NotFoundError('API token not found.');
    return presentApiToken(row);
  }

  async remove(principal: Principal, workspaceId: number, tokenId: number) {
    await requireWorkspaceAccess(this.db, principal, workspaceId, 'supervisor');
    if (!(await this.store.remove(this.db, workspaceId, tokenId))) throw new NotFoundError('API token not found.');
  }
}
