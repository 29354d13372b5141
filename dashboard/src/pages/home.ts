import type { Principal } from '../../../features/auth/principal.js';
import { at, isStaffUser, supervises } from '../context.js';
import { html, type Html } from '../web/html.js';
import { badge, postButton } from './components.js';

interface WorkspaceChoice {
  name: string;
  disabled: boolean;
}

/** Every member's own work. */
const MEMBER_CARDS = [
  { path: '/sessions', title: 'Sessions', text: 'Your sessions of each model: predictions, their explanations and feedback.' },
  { path: '/datasets', title: 'Datasets', text: 'Export a closed session as a dataset; download its records.' },
  { path: '/aliases', title: 'Alias comparison', text: 'A model’s aliases, their traffic policies and history, and how the versions behind one did: outcomes, latency and feedback.' },
];

const CARDS = [
  { path: '/tokens', title: 'API tokens', text: 'Keys for scripts and services, with an expiry date; revoke them at any time.' },
  { path: '/applications', title: 'OAuth applications', text: 'Client credentials for machine-to-machine access through /o/token/.' },
  { path: '/members', title: 'Members', text: 'Who belongs to the workspace; invite people by e-mail.' },
  { path: '/models', title: 'Models', text: 'Registered models and their explainers.' },
  { path: '/deployments', title: 'Deployments', text: 'Model registries and servers the workspace uses.' },
  { path: '/storage', title: 'Storage', text: 'Blob storage backends for model cards and files.' },
  { path: '/metrics', title: 'Metrics', text: 'Sessions, invocations and models over time.' },
  { path: '/settings', title: 'Workspace settings', text: 'The workspace logo.' },
];

export function homeBody(principal: Principal, workspaces: WorkspaceChoice[], csrfToken: string): Html {
  if (!principal.workspace) return chooser(principal, workspaces, csrfToken);
  const role = supervises(principal) ? 'supervisor' : 'user';
  return html`<p class="lead">You are signed in to <strong>${principal.workspace.name}</strong> as ${badge(role)}.</p>
  ${supervises(principal) ? cards([...MEMBER_CARDS, ...CARDS]) : html`${cards(MEMBER_CARDS)}${userHelp()}`}
  ${isStaffUser(principal) ? html`<p><a href="${at('/workspaces')}">Manage all workspaces</a> (staff).</p>` : ''}`;
}

function chooser(principal: Principal, workspaces: WorkspaceChoice[], csrfToken: string): Html {
  const list = workspaces.length
    ? html`<ul class="choices">${workspaces.map(
        (w) =>
          html`<li><span class="choice-name">${w.name}</span>${w.disabled ? badge('disabled', 'off') : postButton({ action: at('/workspace'), csrf: csrfToken, label: 'Open', variant: 'primary', fields: { workspace: w.name }, accessibleLabel: `Open workspace ${w.name}` })}</li>`,
      )}</ul>`
    : html`<p>You do not belong to any workspace yet. A supervisor or staff user can invite you.</p>`;
  return html`<h2>Choose a workspace</h2>${list}
  ${isStaffUser(principal) ? html`<p><a href="${at('/workspaces')}">Manage all workspaces</a> (staff).</p>` : ''}`;
}

function cards(shown: typeof CARDS): Html {
  return html`<ul class="cards">${shown.map((c) => html`<li class="card"><h2><a href="${at(c.path)}">${c.title}</a></h2><p>${c.text}</p></li>`)}</ul>`;
}

function userHelp(): Html {
  return html`<div class="card stack">
  <p>Members use the platform through its API: sign in with <code>POST /api/auth/token/obtain</code> and call the public server with the access token.</p>
  <p>API tokens, OAuth applications, invitations and metrics are managed by the supervisors of the workspace.</p>
</div>`;
}
