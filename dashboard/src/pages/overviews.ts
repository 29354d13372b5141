import type { ModelMetadata } from '../../../features/models/present.js';
import { at } from '../context.js';
import { html, type Html } from '../web/html.js';
import { badge, code, dataTable } from './components.js';
import { aliasesPath } from './model-aliases.js';

// Read-only overviews: what the supervisor manages through the API.

export interface ModelItem {
  model_metadata: ModelMetadata;
  is_explainer: boolean;
  has_explainer: boolean;
}

export function modelsBody(models: ModelItem[]): Html {
  return html`<p class="muted">Models are registered through the private API (<code>POST /api/platform_model</code>).</p>
${dataTable({
  caption: 'Registered models',
  headers: ['Code', 'Version', 'Name', 'Description', 'Kind', 'Deployment', 'Options'],
  rows: models.map(({ model_metadata: m, is_explainer, has_explainer }) => [
    html`${code(m.model_code)}<br><a href="${aliasesPath(m.model_code)}" aria-label="${`Aliases of ${m.model_code}`}">Aliases</a>`,
    code(m.version),
    m.name,
    m.description,
    is_explainer ? badge('explainer') : has_explainer ? badge('explained') : badge('model'),
    deploymentOf(m),
    options(m),
  ]),
  empty: 'No models are registered in this workspace.',
})}`;
}

export interface DeploymentItem {
  deployment_key: string;
  registry_connector_class: string;
  registry_connector_init: Record<string, unknown>;
  server_proxy_class: string;
  server_proxy_init: Record<string, unknown>;
  max_concurrent_calls: number | null;
}

export function deploymentsBody(deployments: DeploymentItem[]): Html {
  return html`<p class="muted">Deployments are managed through the private API (<code>/api/deployment</code>, where <code>PATCH</code> changes the calls at once); secrets are never shown.</p>
${dataTable({
  caption: 'Deployments',
  headers: ['Key', 'Registry', 'Model server', 'Calls at once'],
  rows: deployments.map((d) => [
    html`${code(d.deployment_key)}<br><a href="${at(`/deployments/${encodeURIComponent(d.deployment_key)}/offered`)}">Offered models</a>`,
    endpoint(d.registry_connector_init.model_registry_url, d.registry_connector_class),
    endpoint(d.server_proxy_init.server_proxy_url, d.server_proxy_class),
    d.max_concurrent_calls === null ? 'no limit' : String(d.max_concurrent_calls),
  ]),
  empty: 'No deployments in this workspace.',
})}`;
}

export interface StorageItem {
  storage_key: string;
  storage_class: string;
}

export function storageBody(storage: StorageItem[]): Html {
  return html`<p class="muted">Storage backends are managed through the private API (<code>/api/storage</code>); credentials are never shown.</p>
${dataTable({
  caption: 'Storage configurations',
  headers: ['Key', 'Class'],
  rows: storage.map((s) => [code(s.storage_key), code(s.storage_class)]),
  empty: 'No storage is configured in this workspace.',
})}`;
}

/** The model's deployment, and the service behind it when its registry names one (KServe): where, and its state when registered. */
function deploymentOf(model: ModelMetadata): Html | string {
  const native = model.native_metadata as { deployment_key?: unknown; registry?: Record<string, unknown> };
  if (typeof native.deployment_key !== 'string') return '—';
  const registry = native.registry ?? {};
  if (typeof registry.namespace !== 'string' || typeof registry.name !== 'string') return code(native.deployment_key);
  const state = registry.ready === true ? badge('ready', 'ok') : registry.ready === false ? badge('not ready', 'off') : '';
  return html`${code(native.deployment_key)}<br><span class="muted">${registry.namespace}/${registry.name}</span> ${state}`;
}

function options(model: ModelMetadata): Html {
  const flags = [model.realtime_execution && 'real-time', model.allow_download && 'download', model.need_context && 'context'].filter((f): f is string => Boolean(f));
  return flags.length ? html`${flags.map((f) => badge(f))}` : html`<span class="muted">—</span>`;
}

/** A URL the platform calls, with the connector class that calls it under it; both may wrap, so the table fits the window. */
function endpoint(url: unknown, className: string): Html {
  return html`<span class="wrap">${typeof url === 'string' && url ? url : '—'}</span><br>${dotted(className)}`;
}

/** A class name that may break after each dot (didyma.registry.<wbr>OpenInferenceRegistryConnector). */
const dotted = (name: string) => html`<code>${name.split('.').map((part, i) => (i ? html`.<wbr>${part}` : part))}</code>`;
