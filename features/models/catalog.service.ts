import type { Db } from '../../infra/db/database.js';
import { NotFoundError } from '../../kernel/errors/errors.js';
import type { Principal } from '../auth/principal.js';
import type { FileRow, FilesStore } from '../files/store.js';
import type { ModelRow, ModelsStore } from './store.js';
import type { ModelAliasesStore } from './aliases.store.js';
import { presentChain, presentModel, type ServingState } from './present.js';
import type { ChangeFeed } from '../../infra/db/change-feed.js';
import { ReadCache } from '../../infra/db/read-cache.js';
import type { Page } from '../../infra/db/keyset.js';

/**
 * The state now of the model a registration recorded as `registry` (its
 * `native_metadata.registry`), for a registry that can tell; undefined
 * otherwise, or when it cannot be read.
 */
export type ServingStateOf = (workspace: string, registry: Record<string, unknown>) => Promise<ServingState | undefined>;

/** What workspace members read about models (public server). */
export class ModelCatalogService {
  /** Live models by workspace and pair: read on every invocation call, changed rarely. */
  private readonly liveModels: ReadCache<ModelRow | undefined> | undefined;

  constructor(
    private readonly db: Db,
    private readonly stores: { models: ModelsStore; files: Pick<FilesStore, 'inWorkspace'>; aliases: Pick<ModelAliasesStore, 'namesOf'> },
    cache?: { changes: ChangeFeed; maxEntries: number },
    private readonly servingStateOf?: ServingStateOf,
  ) {
    this.liveModels = cache && new ReadCache(cache.changes, 'models', { maxEntries: cache.maxEntries, maxAgeMs: 60_000 });
  }

  async list(principal: Principal, page: Page, filter: { modelCode?: string } = {}) {
    const workspace = principal.workspace!;
    const { rows, total, next } = await this.stores.models.pageLive(this.db, workspace.id, page, filter);
    const ids = rows.map((row) => row.id);
    const [explained, aliases] = await Promise.all([this.stores.models.explainedAmong(this.db, workspace.id, ids), this.stores.aliases.namesOf(this.db, ids)]);
    const items = rows.map((row) => ({
      model_metadata: { ...presentModel(row, workspace.name), aliases: aliases.get(row.id) ?? [] },
      is_explainer: row.explains_id !== null,
      has_explainer: explained.has(row.id),
    }));
    return { items, total, next };
  }

  /** The model with its explainer chain, each link with its serving state now when its registry can tell. */
  async get(principal: Principal, code: string, version: string) {
    const model = await this.live(principal, code, version);
    const chain = [model, ...(await this.stores.models.explainersOf(this.db, model))];
    const workspace = principal.workspace!.name;
    const stateOf = this.servingStateOf;
    const serving = stateOf ? await Promise.all(chain.map((row) => stateOf(workspace, (row.native_metadata.registry ?? {}) as Record<string, unknown>))) : [];
    const aliases = await this.stores.aliases.namesOf(this.db, [model.id]);
    return { ...presentChain(chain, workspace, serving), aliases: aliases.get(model.id) ?? [] };
  }

  /** A live model of the caller's workspace, or 404. */
  async live(principal: Principal, code: string, version: string): Promise<ModelRow> {
    const workspaceId = principal.workspace!.id;
    const read = async () => (await this.stores.models.liveByPair(this.db, workspaceId, code, version)) as ModelRow | undefined;
    const model = await (this.liveModels ? this.liveModels.get(JSON.stringify([workspaceId, code, version]), read) : read());
    if (!model) throw new NotFoundError(`Model ${code} version ${version} not found.`);
    return model;
  }

  /**
   * The model whose sessions the caller reads: the live one, or a deleted one,
   * whose history its users keep; 404 when the workspace never had it.
   */
  async forReading(principal: Principal, code: string, version: string): Promise<ModelRow> {
    try {
      return await this.live(principal, code, version);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      const model = await this.stores.models.byPair(this.db, principal.workspace!.id, code, version);
      if (!model) throw error;
      return model;
    }
  }

  /** A model the caller reads (as `forReading`) followed by every explainer registered below it. */
  async chainForReading(principal: Principal, code: string, version: string): Promise<ModelRow[]> {
    const model = await this.forReading(principal, code, version);
    return [model, ...(await this.stores.models.registeredExplainersOf(this.db, model))];
  }

  /** The live explainer of a model, if it has one. */
  explainerOf(model: ModelRow): Promise<ModelRow | undefined> {
    return this.stores.models.liveExplainerOf(this.db, model.id);
  }

  async modelCard(principal: Principal, code: string, version: string): Promise<FileRow> {
    const model = await this.live(principal, code, version);
    const file = model.model_card_file_id ? await this.stores.files.inWorkspace(this.db, model.workspace_id, model.model_card_file_id) : undefined;
    if (!file) throw new NotFoundError('This model has no model card.');
    return file;
  }
}
