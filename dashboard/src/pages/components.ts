import { html, type Html, type Slot } from '../web/html.js';

// Building blocks of the pages. Each renders accessible markup: labelled
// fields, hints tied with aria-describedby, alerts announced to screen readers.

export const csrfField = (token: string) => html`<input type="hidden" name="_csrf" value="${token}">`;

export interface FieldOptions {
  name: string;
  label: string;
  type?: 'text' | 'email' | 'password' | 'date' | 'search';
  value?: string;
  required?: boolean;
  autocomplete?: string;
  hint?: Slot;
  min?: string;
  minlength?: number;
  maxlength?: number;
  pattern?: string;
  /** The field's problem, shown under it and announced. */
  problem?: string;
}

export function textField(options: FieldOptions): Html {
  const id = `field-${options.name}`;
  const described = [options.hint ? `${id}-hint` : '', options.problem ? `${id}-problem` : ''].filter(Boolean).join(' ');
  return html`<div class="field${options.problem ? ' field-invalid' : ''}">
  <label for="${id}">${options.label}${options.required ? '' : html` <span class="optional">(optional)</span>`}</label>
  <input id="${id}" name="${options.name}" type="${options.type ?? 'text'}"${attr('value', options.value)}${flag('required', options.required)}${attr('autocomplete', options.autocomplete)}${attr('min', options.min)}${attr('minlength', options.minlength)}${attr('maxlength', options.maxlength)}${attr('pattern', options.pattern)}${attr('aria-describedby', described || undefined)}${flag('aria-invalid', Boolean(options.problem), 'true')}>
  ${options.hint ? html`<p class="hint" id="${id}-hint">${options.hint}</p>` : ''}
  ${options.problem ? html`<p class="problem" id="${id}-problem">${options.problem}</p>` : ''}
</div>`;
}

export interface Choice {
  value: string;
  label: string;
}

export function selectField(options: { name: string; label: string; choices: readonly Choice[]; value?: string; hint?: Slot }): Html {
  const id = `field-${options.name}`;
  return html`<div class="field">
  <label for="${id}">${options.label}</label>
  <select id="${id}" name="${options.name}"${attr('aria-describedby', options.hint ? `${id}-hint` : undefined)}>
    ${options.choices.map((c) => html`<option value="${c.value}"${flag('selected', c.value === options.value)}>${c.label}</option>`)}
  </select>
  ${options.hint ? html`<p class="hint" id="${id}-hint">${options.hint}</p>` : ''}
</div>`;
}

export function checkbox(options: { name: string; label: Slot; checked?: boolean; required?: boolean }): Html {
  const id = `field-${options.name}`;
  return html`<div class="check">
  <input id="${id}" name="${options.name}" type="checkbox"${flag('checked', options.checked)}${flag('required', options.required)}>
  <label for="${id}">${options.label}</label>
</div>`;
}

export interface PostButtonOptions {
  action: string;
  csrf: string;
  label: string;
  fields?: Record<string, string>;
  variant?: 'primary' | 'secondary' | 'danger';
  /** Asked (by dashboard.js) before the form is sent. */
  confirm?: string;
  /** Names what the button acts on for screen readers, e.g. "Revoke token ci-runner". */
  accessibleLabel?: string;
}

/** A one-button form: every change of state is a POST with its CSRF token. */
export function postButton(options: PostButtonOptions): Html {
  const hidden = Object.entries(options.fields ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  return html`<form class="inline" method="post" action="${options.action}"${attr('data-confirm', options.confirm)}>${csrfField(options.csrf)}${hidden}<button type="submit" class="button ${options.variant ?? 'secondary'}"${attr('aria-label', options.accessibleLabel)}>${options.label}</button></form>`;
}

export function alertBox(kind: 'error' | 'notice' | 'warning', message: Slot): Html {
  // Errors interrupt (alert); notices are announced politely (status).
  return html`<div class="alert alert-${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${message}</div>`;
}

/** A secret shown once (API key, client secret, invitation link) with its copy button. */
export function secretOnce(options: { id: string; label: string; value: string; note?: Slot }): Html {
  return html`<div class="secret">
  <label for="${options.id}">${options.label}</label>
  <div class="secret-row">
    <input id="${options.id}" type="text" readonly value="${options.value}" spellcheck="false" autocomplete="off">
    <button type="button" class="button secondary" data-copy="${options.id}">Copy</button>
  </div>
  <p class="hint" aria-live="polite" data-copy-status="${options.id}">${options.note ?? ''}</p>
</div>`;
}

export interface TableOptions {
  caption: string;
  headers: string[];
  rows: Slot[][];
  empty: string;
}

export function dataTable(options: TableOptions): Html {
  if (!options.rows.length) return html`<p class="empty">${options.empty}</p>`;
  return html`<div class="table-wrap"><table>
  <caption class="visually-hidden">${options.caption}</caption>
  <thead><tr>${options.headers.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
  <tbody>${options.rows.map((row) => html`<tr>${row.map((cell) => html`<td>${cell}</td>`)}</tr>`)}</tbody>
</table></div>`;
}

/** A timestamp in UTC, machine-readable too. */
export function timeText(iso: string | null | undefined, fallback = 'never'): Html {
  if (!iso) return html`<span class="muted">${fallback}</span>`;
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

export const badge = (text: string, tone: 'ok' | 'off' | 'info' = 'info') => html`<span class="badge badge-${tone}">${text}</span>`;

export const code = (text: string) => html`<code>${text}</code>`;

/** An id or path that may break anywhere (uuids have no other place to), so a table keeps to the window. */
export const longCode = (text: string) => html`<code class="wrap">${text}</code>`;

function attr(name: string, value: string | number | undefined): Html {
  return value === undefined || value === '' ? html`` : html` ${name}="${String(value)}"`;
}

function flag(name: string, on: boolean | undefined, value?: string): Html {
  if (!on) return html``;
  return value === undefined ? html` ${name}` : html` ${name}="${value}"`;
}
