import { at } from '../context.js';
import { html, type Html } from '../web/html.js';
import { badge, csrfField, dataTable, selectField, textField } from './components.js';
import type { OfferedModel } from '../../../features/models/offers.service.js';

/** What a deployment's registry offers, each with a link to register it. */
export function offeredBody(page: { deploymentKey: string; offers: OfferedModel[] }): Html {
  return html`<p class="muted">What deployment <code>${page.deploymentKey}</code>'s registry offers for registration, as it answers now; a model is registered under its model code, its schemas derived by the registry when it can.</p>
${dataTable({
  caption: 'Offered models',
  headers: ['Model code', 'Service', 'State', 'Registered versions', 'Register'],
  rows: page.offers.map((offer) => [html`<code>${offer.model_code}</code>`, serviceOf(offer.registry), stateOf(offer.registry), offer.registered_versions.join(', ') || '—', registerLink(page.deploymentKey, offer)]),
  empty: 'The registry offers nothing this workspace may register.',
})}`;
}

function serviceOf(registry: Record<string, unknown>): Html | string {
  const where = [registry.namespace, registry.name].filter((part) => typeof part === 'string').join('/');
  const revision = typeof registry.latest_ready_revision === 'string' ? html`<br><span class="muted">revision ${registry.latest_ready_revision}</span>` : '';
  return where ? html`<code>${where}</code>${typeof registry.component === 'string' ? ` (${registry.component})` : ''}${revision}` : '—';
}

function stateOf(registry: Record<string, unknown>): Html | string {
  if (registry.ready === true) return badge('ready', 'ok');
  if (registry.ready === false) return badge('not ready', 'off');
  return '—';
}

export const offerPath = (deploymentKey: string, modelCode: string) => at(`/deployments/${encodeURIComponent(deploymentKey)}/offered/${encodeURIComponent(modelCode)}`);

function registerLink(deploymentKey: string, offer: OfferedModel): Html {
  return html`<a href="${offerPath(deploymentKey, offer.model_code)}" aria-label="Register ${offer.model_code}">Register…</a>`;
}

export interface RegisterOfferPage {
  csrfToken: string;
  deploymentKey: string;
  offer: OfferedModel;
  /** The workspace's storage keys, where the model card is uploaded. */
  storageKeys: string[];
  draft?: { version: string; name: string; description: string };
}

/** The form registering one offered model, its model card uploaded with it. */
export function registerOfferBody(page: RegisterOfferPage): Html {
  const { offer, draft } = page;
  if (page.storageKeys.length === 0) return html`<p>Configure a storage first (<code>/api/storage</code>): the model card is uploaded to one.</p>`;
  return html`<p><code>${offer.model_code}</code>: ${serviceOf(offer.registry)} ${stateOf(offer.registry)}</p>
<form class="card stack" method="post" action="${offerPath(page.deploymentKey, offer.model_code)}" enctype="multipart/form-data">
  ${csrfField(page.csrfToken)}
  ${offer.version === null ? textField({ name: 'version', label: 'Version', value: draft?.version, required: true, maxlength: 100, hint: 'The registry answers to any version name: choose one.' }) : html`<p>Version <code>${offer.version}</code>, the one the registry answers to.</p>`}
  ${textField({ name: 'name', label: 'Name', value: draft?.name ?? offer.model_code, required: true, maxlength: 200 })}
  ${textField({ name: 'description', label: 'Description', value: draft?.description, required: true, maxlength: 2000 })}
  ${selectField({ name: 'storage_key', label: 'Storage of the model card', choices: page.storageKeys.map((key) => ({ value: key, label: key })) })}
  <div class="field">
    <label for="field-card">Model card (Markdown)</label>
    <input id="field-card" name="card" type="file" accept=".md,text/markdown" required>
  </div>
  <button type="submit" class="button primary">Register</button>
</form>`;
}
