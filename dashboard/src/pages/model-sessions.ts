import { html, type Html } from '../web/html.js';
import { badge, code, dataTable, postButton, selectField, timeText, type Choice } from './components.js';
import { datasetsLink, modelKey, modelSessionsPath, sessionLink, sessionsLink, type ModelRef } from './links.js';
import { at } from '../context.js';

// The caller's sessions of one model version, as the public API lists them.

export type SessionState = 'OPEN' | 'CLOSED';

export interface SessionItem {
  id: string;
  state: SessionState;
  created_at: string;
}

export interface SessionsPage {
  csrfToken: string;
  /** The models to choose from, as `code:version` choices. */
  models: Choice[];
  model?: ModelRef;
  state?: SessionState;
  sessions: SessionItem[];
  total: number;
  /** The cursor of the next (older) page, when there is one. */
  older?: string;
  /** This is a later page: offer the way back to the newest. */
  paged: boolean;
}

export const STATE_CHOICES: Choice[] = [
  { value: '', label: 'Open and closed' },
  { value: 'OPEN', label: 'Open' },
  { value: 'CLOSED', label: 'Closed' },
];

export function sessionsBody(page: SessionsPage): Html {
  if (!page.models.length && !page.model) return html`<p class="empty">No models are registered in this workspace yet.</p>`;
  const chosen = page.model && modelKey(page.model);
  return html`<form class="card row-form" method="get" action="${at('/sessions')}">
  ${selectField({ name: 'model', label: 'Model', choices: page.models, value: chosen })}
  ${selectField({ name: 'state', label: 'State', choices: STATE_CHOICES, value: page.state ?? '' })}
  <button type="submit" class="button primary">Show sessions</button>
</form>
${page.model ? sessionList(page, page.model) : ''}`;
}

function sessionList(page: SessionsPage, model: ModelRef): Html {
  const key = modelKey(model);
  const pager = html`<p class="actions">
  ${page.paged ? html`<a class="button secondary" href="${sessionsLink({ model: key, state: page.state })}">Newest sessions</a>` : ''}
  ${page.older ? html`<a class="button secondary" href="${sessionsLink({ model: key, state: page.state, after: page.older })}">Older sessions</a>` : ''}
</p>`;
  return html`<p class="muted">${String(page.total)} ${page.total === 1 ? 'session' : 'sessions'} of yours with ${code(model.code)} ${code(model.version)}${page.state ? ` (${page.state.toLowerCase()})` : ''}, newest first. Close one to export it as a dataset.</p>
<p class="actions">${postButton({ action: modelSessionsPath(model), csrf: page.csrfToken, label: 'Start a session', variant: 'primary', accessibleLabel: `Start a session with ${key}` })}</p>
${dataTable({
  caption: 'Sessions',
  headers: ['Session', 'State', 'Started', 'Actions'],
  rows: page.sessions.map((s) => [html`<a href="${sessionLink(model, s.id)}">${code(s.id)}</a>`, stateBadge(s.state), timeText(s.created_at), actions(page, model, s)]),
  empty: page.state ? `No ${page.state.toLowerCase()} sessions of this model.` : 'You have no sessions of this model yet.',
})}
${pager}`;
}

export const stateBadge = (state: SessionState) => (state === 'OPEN' ? badge('open', 'ok') : badge('closed'));

function actions(page: SessionsPage, model: ModelRef, session: SessionItem): Html {
  const action = `${sessionLink(model, session.id)}/state`;
  const shown = { shown: page.state ?? '' };
  if (session.state === 'OPEN') {
    return postButton({ action, csrf: page.csrfToken, label: 'Close', fields: { state: 'CLOSED', ...shown }, accessibleLabel: `Close session ${session.id}` });
  }
  return html`<div class="actions">
  <a class="button primary" href="${datasetsLink({ model: modelKey(model), session: session.id })}#export" aria-label="Export session ${session.id}">Export</a>
  ${postButton({ action, csrf: page.csrfToken, label: 'Reopen', fields: { state: 'OPEN', ...shown }, accessibleLabel: `Reopen session ${session.id}` })}
</div>`;
}
