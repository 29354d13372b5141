import type { Db, Runner } from '../../infra/db/database.js';
import type { Page } from '../../infra/db/keyset.js';
import type { SecretBox } from '../../infra/crypto/secrets.js';
import type { UrlPolicy } from '../../infra/net/url-policy.js';
import { ConflictError, InputError, NotFoundError } from '../../kernel/errors/errors.js';
import type { Principal } from '../auth/principal.js';
import { callbackPathProblem, endpointForCallback } from './callback.js';
import type { DeliveryStatus, WebhookDeliveriesStore } from './deliveries.store.js';
import type { EndpointChanges, EndpointRow, WebhookEndpointsStore, WebhookEvent } from './endpoints.store.js';
import { aliasRolledBackPayload, datasetExportedPayload } from './payloads.js';
import { presentDelivery, presentEndpoint } from './present.js';
import { newWebhookSecret } from './signature.js';

export interface EndpointInput {
  url: string;
  events: WebhookEvent[];
  description?: string;
  enabled?: boolean;
}

/** A workspace has its maximum of webhook endpoints: nothing was registered. */
export class EndpointLimitError extends ConflictError {
  constructor(max: number) {
    super(`The workspace has ${max} webhook endpoints, the most it may have (DIDYMA_WEBHOOK_MAX_ENDPOINTS); delete one before registering another.`, 'endpoint_limit');
  }
}

/** Where an invocation's callback goes, and which endpoint's secret signs it. */
export interface AllowedCallback {
  callback_endpoint_id: number;
  callback_url: string;
}

/**
 * Webhook endpoints of the caller's workspace and their deliveries
 * (supervisors, private server), the callback URLs they allow, and the
 * deliveries other features queue in their own transactions.
 */
export class WebhooksService {
  constructor(
    private readonly db: Db,
    private readonly stores: { endpoints: WebhookEndpointsStore; deliveries: WebhookDeliveriesStore },
    private readonly box: SecretBox,
    private readonly policy: UrlPolicy,
    private readonly limits: { maxEndpoints: number },
  ) {}

  /** The endpoint, with its secret: the only answer that ever shows it. */
  async create(principal: Principal, input: EndpointInput) {
    const secret = newWebhookSecret();
    const draft = {
      workspace_id: principal.workspace!.id,
      url: this.checkedUrl(input.url, 'url'),
      description: input.description ?? '',
      events: input.events,
      secret_sealed: this.box.seal(secret),
      enabled: input.enabled ?? true,
      created_by_id: principal.user.id,
    };
    const row = await this.stores.endpoints.insertWithin(this.db, draft, this.limits.maxEndpoints);
    if (!row) throw new EndpointLimitError(this.limits.maxEndpoints);
    return { ...this.present(principal, row), secret };
  }

  async list(principal: Principal, page: Page) {
    const { rows, total, next } = await this.stores.endpoints.pageInWorkspace(this.db, principal.workspace!.id, page);
    return { items: rows.map((row) => this.present(principal, row)), total, next };
  }

  async get(principal: Principal, id: number) {
    return this.present(principal, await this.endpoint(principal, id));
  }

  async update(principal: Principal, id: number, input: Partial<EndpointInput>) {
    const changes: EndpointChanges = { ...input, ...(input.url !== undefined && { url: this.checkedUrl(input.url, 'url') }) };
    return this.present(principal, await this.changed(principal, id, changes));
  }

  /** A new secret, shown once; deliveries sent from now on are signed with it. */
  async rotateSecret(principal: Principal, id: number) {
    const secret = newWebhookSecret();
    return { ...this.present(principal, await this.changed(principal, id, { secret_sealed: this.box.seal(secret) })), secret };
  }

  /** Deletes the endpoint and its deliveries; invocations whose callback it allowed get none. */
  async remove(principal: Principal, id: number) {
    if (!(await this.stores.endpoints.remove(this.db, principal.workspace!.id, id))) throw new NotFoundError('Webhook endpoint not found.');
  }

  async deliveries(principal: Principal, endpointId: number, page: Page, status?: DeliveryStatus) {
    const endpoint = await this.endpoint(principal, endpointId);
    const { rows, total, next } = await this.stores.deliveries.pageOfEndpoint(this.db, { workspaceId: endpoint.workspace_id, endpointId: endpoint.id }, page, status);
    const attempts = await this.stores.deliveries.attemptsOf(this.db, rows.map((row) => row.id));
    return { items: rows.map((row) => presentDelivery(row, endpoint.url, attempts.filter((a) => a.delivery_id === row.id))), total, next };
  }

  async delivery(principal: Principal, endpointId: number, deliveryId: string) {
    const endpoint = await this.endpoint(principal, endpointId);
    const row = await this.stores.deliveries.ofEndpoint(this.db, endpoint.id, deliveryId);
    if (!row) throw new NotFoundError('Webhook delivery not found.');
    return presentDelivery(row, endpoint.url, await this.stores.deliveries.attemptsOf(this.db, [row.id]));
  }

  /** Sends a delivery again, with the same `webhook-id`, its schedule of retries afresh; 409 while an attempt is in flight. */
  async redeliver(principal: Principal, endpointId: number, deliveryId: string) {
    const endpoint = await this.endpoint(principal, endpointId);
    const row = await this.stores.deliveries.redeliver(this.db, endpoint.id, deliveryId);
    if (row) return presentDelivery(row, endpoint.url, await this.stores.deliveries.attemptsOf(this.db, [row.id]));
    if (!(await this.stores.deliveries.ofEndpoint(this.db, endpoint.id, deliveryId))) throw new NotFoundError('Webhook delivery not found.');
    throw new ConflictError('An attempt of this delivery is in flight; redeliver it once it has ended.', 'delivery_in_flight');
  }

  /** The endpoint of the workspace that allows `callbackUrl` (same origin, a parent path after percent-decoding), or a 400 saying what would. */
  async allowCallback(workspaceId: number, callbackUrl: string): Promise<AllowedCallback> {
    const url = this.policy.checkSyntax(callbackUrl, 'callback_url');
    const problem = callbackPathProblem(callbackUrl, url);
    if (problem) throw new InputError(`callback_url is not allowed: ${problem}.`, [{ field: 'callback_url', message: problem }]);
    const endpoint = endpointForCallback(await this.stores.endpoints.enabledInWorkspace(this.db, workspaceId), url);
    if (!endpoint) {
      const message = `callback_url: no enabled webhook endpoint of the workspace allows ${url.origin}${url.pathname}; a supervisor registers one with the same origin and this path or a parent of it.`;
      throw new InputError(message, [{ field: 'callback_url', message: 'not allowed by any webhook endpoint of the workspace' }]);
    }
    return { callback_endpoint_id: endpoint.id, callback_url: url.href };
  }

  /** Queues `dataset.exported` in the caller's transaction, so it commits with the dataset or not at all. */
  async queueDatasetExported(trx: Runner, workspaceId: number, dataset: Record<string, unknown>): Promise<void> {
    await this.stores.deliveries.enqueueForWorkspace(trx, workspaceId, 'dataset.exported', datasetExportedPayload(dataset));
  }

  /** Queues `alias.rolled_back` in the rollback's transaction, so it commits with the rollback or not at all. */
  async queueAliasRolledBack(trx: Runner, workspaceId: number, rollback: Record<string, unknown>): Promise<void> {
    await this.stores.deliveries.enqueueForWorkspace(trx, workspaceId, 'alias.rolled_back', aliasRolledBackPayload(rollback));
  }

  private async endpoint(principal: Principal, id: number): Promise<EndpointRow> {
    const row = await this.stores.endpoints.inWorkspace(this.db, principal.workspace!.id, id);
    if (!row) throw new NotFoundError('Webhook endpoint not found.');
    return row;
  }

  private async changed(principal: Principal, id: number, changes: EndpointChanges): Promise<EndpointRow> {
    const row = await this.stores.endpoints.update(this.db, principal.workspace!.id, id, changes);
    if (!row) throw new NotFoundError('Webhook endpoint not found.');
    return row;
  }

  private checkedUrl(url: string, field: string): string {
    return this.policy.checkSyntax(url, field).href;
  }

  private present(principal: Principal, row: EndpointRow) {
    return presentEndpoint(row, principal.workspace!.name);
  }
}
