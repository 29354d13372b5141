import { at } from '../context.js';
import { html, type Html } from '../web/html.js';
import { code, csrfField, dataTable, textField, timeText } from './components.js';
import type { ShownPolicy } from './alias-policy-form.js';

// A model code's aliases: where each points, its traffic policy in one line, and (supervisors) the form that sets one.

export interface AliasItem {
  alias: string;
  model_code: string;
  version: string;
  updated_at: string;
  policy: ShownPolicy | null;
}

export interface ModelAliasesPage {
  code: string;
  aliases: AliasItem[];
  /** Supervisors' CSRF token; members get no form. */
  csrfToken?: string;
  draft?: { alias: string; version: string };
}

export const aliasesPath = (modelCode: string) => at(`/aliases/${encodeURIComponent(modelCode)}`);
export const aliasPath = (modelCode: string, alias: string) => `${aliasesPath(modelCode)}/${encodeURIComponent(alias)}`;
export const comparisonPath = (modelCode: string, alias: string) => at(`/aliases?model=${encodeURIComponent(modelCode)}&alias=${encodeURIComponent(alias)}`);

export function modelAliasesBody(page: ModelAliasesPage): Html {
  return html`<section aria-labelledby="alias-list">
  <h2 id="alias-list">Aliases of ${code(page.code)}</h2>
  ${dataTable({
    caption: `Aliases of ${page.code}`,
    headers: ['Alias', 'Version', 'Traffic policy', 'Updated', 'Comparison'],
    rows: page.aliases.map((a) => [
      html`<a href="${aliasPath(a.model_code, a.alias)}">${a.alias}</a>`,
      a.version,
      policySummary(a.policy),
      timeText(a.updated_at),
      html`<a href="${comparisonPath(a.model_code, a.alias)}" aria-label="${`Compare the versions behind ${a.alias}`}">Compare</a>`,
    ]),
    empty: 'This model has no aliases yet.',
  })}
</section>
${page.csrfToken ? setAliasForm(page.code, page.csrfToken, page.draft) : ''}`;
}

function setAliasForm(modelCode: string, csrf: string, draft: ModelAliasesPage['draft']): Html {
  return html`<section aria-labelledby="set-alias">
  <h2 id="set-alias">Set an alias</h2>
  <form class="card row-form" method="post" action="${aliasesPath(modelCode)}">
    ${csrfField(csrf)}
    ${textField({ name: 'alias', label: 'Alias', value: draft?.alias, required: true, pattern: '[a-z][a-z0-9\\-]{0,39}', hint: 'production, staging, …; an existing alias moves' })}
    ${textField({ name: 'version', label: 'Version', value: draft?.version, required: true })}
    <button type="submit" class="button primary">Set the alias</button>
  </form>
</section>`;
}

/** A policy in one line: `1: 90%, 2: 10%; shadows 3; sticky user; guards: …`, or a dash without one. */
export function policySummary(policy: ShownPolicy | null | undefined): string {
  if (!policy) return '–';
  const parts = [policy.weights.map((w) => `${w.version}: ${w.weight}%`).join(', ')];
  if (policy.shadows.length) parts.push(`shadows ${policy.shadows.join(', ')}`);
  parts.push(`sticky ${policy.sticky}`);
  const guards = policy.guards;
  if (guards) {
    const judged = [
      guards.max_error_rate === undefined ? '' : `error rate ≤ ${guards.max_error_rate}`,
      guards.max_p99_run_ms === undefined ? '' : `p99 run ≤ ${guards.max_p99_run_ms} ms`,
      ...(guards.feedback ?? []).map((g) => (g.min_rate === undefined ? `${g.property} mean ≥ ${g.min_mean}` : `${g.property} rate ≥ ${g.min_rate}`)),
    ].filter(Boolean);
    parts.push(`guards: ${[...judged, `from ${guards.min_invocations ?? 100} invocations`].join(', ')}`);
  }
  return parts.join('; ');
}
