import type { Principal } from '../../../features/auth/principal.js';
import { at, isStaffUser, supervises } from '../context.js';
import { html, type Html } from '../web/html.js';
import { alertBox, csrfField } from './components.js';
import type { ApiPage } from '../api-pages.js';

export interface Section {
  path: string;
  label: string;
  visible: (principal: Principal) => boolean;
}

/** The navigation; a section shows only to those who may open it. */
export const SECTIONS: Section[] = [
  { path: '', label: 'Overview', visible: () => true },
  { path: '/sessions', label: 'Sessions', visible: (p) => Boolean(p.workspace) },
  { path: '/datasets', label: 'Datasets', visible: (p) => Boolean(p.workspace) },
  { path: '/aliases', label: 'Alias comparison', visible: (p) => Boolean(p.workspace) },
  { path: '/tokens', label: 'API tokens', visible: supervises },
  { path: '/applications', label: 'OAuth applications', visible: supervises },
  { path: '/members', label: 'Members', visible: supervises },
  { path: '/models', label: 'Models', visible: supervises },
  { path: '/deployments', label: 'Deployments', visible: supervises },
  { path: '/storage', label: 'Storage', visible: supervises },
  { path: '/metrics', label: 'Metrics', visible: supervises },
  { path: '/webhooks', label: 'Webhooks', visible: supervises },
  { path: '/settings', label: 'Workspace settings', visible: supervises },
  { path: '/audit', label: 'Audit trail', visible: (p) => supervises(p) || isStaffUser(p) },
  { path: '/workspaces', label: 'All workspaces', visible: isStaffUser },
  { path: '/sign-on', label: 'Sign-on', visible: isStaffUser },
];

export interface LayoutOptions {
  title: string;
  body: Html;
  csrfToken: string;
  principal?: Principal;
  /** Workspaces of the switcher (the user's memberships). */
  workspaces?: Array<{ name: string; disabled: boolean }>;
  /** Path of the current section, to mark it in the navigation. */
  current?: string;
  notice?: string;
  error?: string;
  /** The servers' API pages (Swagger UI), linked under the sections. */
  apiPages?: ApiPage[];
}

export function layout(options: LayoutOptions): Html {
  return html`<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${options.title} · didyma</title>
  <link rel="icon" href="${at('/static/mark.svg')}" type="image/svg+xml">
  <link rel="stylesheet" href="${at('/static/dashboard.css')}">
  <script src="${at('/static/dashboard.js')}" defer></script>
</head>
<body>
  <a class="skip-link" href="#main">Skip to content</a>
  ${options.principal ? signedInChrome(options, options.principal) : bareChrome(options)}
</body>
</html>`;
}

function bareChrome(options: LayoutOptions): Html {
  return html`<header class="topbar"><a class="brand" href="${at()}">${mark()}<span>didyma</span></a></header>
  <main id="main" class="narrow" tabindex="-1">
    <h1>${options.title}</h1>
    ${messages(options)}
    ${options.body}
  </main>`;
}

function signedInChrome(options: LayoutOptions, principal: Principal): Html {
  return html`<header class="topbar">
    <a class="brand" href="${at()}">${mark()}<span>didyma</span></a>
    <button type="button" class="button secondary menu-button" aria-expanded="false" aria-controls="sections" data-menu>Menu</button>
    ${switcher(options, principal)}
    <div class="account">
      <span class="who">${principal.user.email}</span>
      <form class="inline" method="post" action="${at('/sign-out')}">${csrfField(options.csrfToken)}<button type="submit" class="button secondary">Sign out</button></form>
    </div>
  </header>
  <div class="shell">
    <nav id="sections" aria-label="Dashboard sections"><ul>
      ${SECTIONS.filter((s) => s.visible(principal)).map((s) => html`<li><a href="${at(s.path)}"${s.path === options.current ? html` aria-current="page"` : ''}>${s.label}</a></li>`)}
    </ul>
    ${apiLinks(options, principal)}</nav>
    <main id="main" tabindex="-1">
      <h1>${options.title}</h1>
      ${messages(options)}
      ${options.body}
    </main>
  </div>`;
}

/** The servers' API pages, to read the API and try it with a token. */
function apiLinks(options: LayoutOptions, principal: Principal): Html {
  const pages = (options.apiPages ?? []).filter((p) => p.visible(principal));
  if (!pages.length) return html``;
  return html`<h2 class="nav-heading" id="nav-api">Try the API</h2>
    <ul aria-labelledby="nav-api">${pages.map((p) => html`<li><a href="${p.url}">${p.label}</a></li>`)}</ul>`;
}

/** Workspace switcher: a plain form, so it works with the keyboard and without script. */
function switcher(options: LayoutOptions, principal: Principal): Html {
  const workspaces = options.workspaces ?? [];
  const current = principal.workspace?.name;
  if (!workspaces.length && !current) return html``;
  return html`<form class="switcher" method="post" action="${at('/workspace')}">
    ${csrfField(options.csrfToken)}
    <label for="workspace-switch">Workspace</label>
    <select id="workspace-switch" name="workspace">
      ${current ? '' : html`<option value="" selected>Choose…</option>`}
      ${workspaces.map((w) => html`<option value="${w.name}"${w.name === current ? html` selected` : ''}${w.disabled ? html` disabled` : ''}>${w.name}${w.disabled ? ' (disabled)' : ''}</option>`)}
    </select>
    <button type="submit" class="button secondary">Switch</button>
  </form>`;
}

function messages(options: LayoutOptions): Html {
  return html`${options.notice ? alertBox('notice', options.notice) : ''}${options.error ? alertBox('error', options.error) : ''}`;
}

const mark = () => html`<img src="${at('/static/mark.svg')}" alt="" width="28" height="28">`;
