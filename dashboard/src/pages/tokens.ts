import { at } from '../context.js';
import { html, type Html } from '../web/html.js';
import { badge, csrfField, dataTable, postButton, secretOnce, textField, timeText } from './components.js';

export interface ApiTokenItem {
  id: number;
  name: string;
  expiration_date: string;
  last_used: string | null;
  created: string | null;
  is_active: boolean;
}

export interface TokensPage {
  csrfToken: string;
  tokens: ApiTokenItem[];
  /** Today (UTC, YYYY-MM-DD): the earliest expiry allowed. */
  today: string;
  defaultExpiry: string;
  created?: { key: string; name: string };
  draft?: { name: string; expiration_date: string };
}

export function tokensBody(page: TokensPage): Html {
  return html`${page.created ? createdKey(page.created) : ''}
<section aria-labelledby="create-token">
  <h2 id="create-token">Create an API token</h2>
  <form class="card row-form" method="post" action="${at('/tokens')}">
    ${csrfField(page.csrfToken)}
    ${textField({ name: 'name', label: 'Name', value: page.draft?.name, required: true, maxlength: 100, hint: 'What uses it, e.g. "nightly-batch".' })}
    ${textField({ name: 'expiration_date', label: 'Expires on', type: 'date', value: page.draft?.expiration_date ?? page.defaultExpiry, required: true, min: page.today, hint: 'Valid through that day (UTC).' })}
    <button type="submit" class="button primary">Create token</button>
  </form>
</section>
<section aria-labelledby="token-list">
  <h2 id="token-list">Tokens of this workspace</h2>
  ${dataTable({
    caption: 'API tokens',
    headers: ['Name', 'Created', 'Expires', 'Last used', 'Status', 'Actions'],
    rows: page.tokens.map((token) => [token.name, timeText(token.created), token.expiration_date, timeText(token.last_used), status(token, page.today), actions(token, page.csrfToken)]),
    empty: 'No API tokens yet.',
  })}
</section>`;
}

function createdKey(created: { key: string; name: string }): Html {
  return html`<section class="card highlight" aria-labelledby="new-token">
  <h2 id="new-token">Token "${created.name}" created</h2>
  <p><strong>Copy the key now: it is shown only once.</strong> Use it as <code>Authorization: Bearer &lt;key&gt;</code>.</p>
  ${secretOnce({ id: 'new-token-key', label: 'API key', value: created.key })}
</section>`;
}

function status(token: ApiTokenItem, today: string): Html {
  if (!token.is_active) return badge('revoked', 'off');
  if (token.expiration_date < today) return badge('expired', 'off');
  return badge('active', 'ok');
}

function actions(token: ApiTokenItem, csrf: string): Html {
  const base = at(`/tokens/${token.id}`);
  return html`<div class="actions">
  ${token.is_active
    ? postButton({ action: `${base}/active`, csrf, label: 'Revoke', fields: { is_active: 'false' }, accessibleLabel: `Revoke token ${token.name}` })
    : postButton({ action: `${base}/active`, csrf, label: 'Re-enable', fields: { is_active: 'true' }, accessibleLabel: `Re-enable token ${token.name}` })}
  ${postButton({ action: `${base}/delete`, csrf, label: 'Delete', variant: 'danger', confirm: `Delete the token "${token.name}" for good?`, accessibleLabel: `Delete token ${token.name}` })}
</div>`;
}
