import { html, type Html } from '../web/html.js';
import { code, csrfField, dataTable, longCode, postButton, textField, timeText } from './components.js';
import { policyForm, type PolicyDraft, type ShownPolicy } from './alias-policy-form.js';
import { aliasesPath, aliasPath, comparisonPath, policySummary, type AliasItem } from './model-aliases.js';

// One alias: where it points, its traffic policy and, for supervisors, the
// forms that move it and set its policy, and its history.

export interface AliasMoveItem {
  from_version: string | null;
  to_version: string | null;
  moved_by: string | null;
  request_id: string | null;
  from_policy: ShownPolicy | null;
  to_policy: ShownPolicy | null;
  reason: string | null;
  moved_at: string;
}

export interface AliasPage {
  alias: AliasItem;
  /** Supervisors only, as on the API: the forms and the history. */
  supervisor?: {
    csrfToken: string;
    moveDraft: string;
    policyDraft: PolicyDraft;
    history: AliasMoveItem[];
    /** Members' e-mails by user id: who made each change (a former member shows by id). */
    emails: Map<string, string>;
    older?: string;
    paged: boolean;
  };
}

export const HISTORY_PER_PAGE = 20;

export function aliasBody(page: AliasPage): Html {
  const { alias: a, supervisor } = page;
  return html`<section class="card stack" aria-labelledby="alias-now">
  <h2 id="alias-now">${code(a.alias)} of ${code(a.model_code)} points at version ${a.version}</h2>
  <p>Traffic policy: ${policySummary(a.policy)}</p>
  <p>Updated ${timeText(a.updated_at)}. <a href="${comparisonPath(a.model_code, a.alias)}">Compare the versions behind it</a> · <a href="${aliasesPath(a.model_code)}">Every alias of ${a.model_code}</a></p>
</section>
${supervisor ? supervisorSections(a, supervisor) : ''}`;
}

function supervisorSections(a: AliasItem, s: NonNullable<AliasPage['supervisor']>): Html {
  const path = aliasPath(a.model_code, a.alias);
  return html`<section aria-labelledby="move-alias">
  <h2 id="move-alias">Move the alias</h2>
  <form class="card row-form" method="post" action="${path}">
    ${csrfField(s.csrfToken)}
    ${textField({ name: 'version', label: 'Version', value: s.moveDraft, required: true, hint: 'Moving to a weighted candidate promotes it: its weight joins the alias’s own.' })}
    <button type="submit" class="button primary">Move</button>
  </form>
</section>
<section aria-labelledby="alias-policy">
  <h2 id="alias-policy">Traffic policy</h2>
  ${policyForm(`${path}/policy`, s.csrfToken, s.policyDraft)}
  ${a.policy ? postButton({ action: `${path}/policy/delete`, csrf: s.csrfToken, label: 'Delete the policy', variant: 'danger', confirm: `Send every new session of ${a.alias} to version ${a.version}?` }) : ''}
</section>
<section aria-labelledby="alias-history">
  <h2 id="alias-history">History</h2>
  ${dataTable({
    caption: `History of ${a.alias}`,
    headers: ['When', 'By', 'Change', 'Policy', 'Reason', 'Request'],
    rows: s.history.map((move) => [
      timeText(move.moved_at),
      move.moved_by === null ? 'the guards' : (s.emails.get(move.moved_by) ?? `user ${move.moved_by}`),
      changeOf(move),
      move.from_policy || move.to_policy ? `${policySummary(move.from_policy)} → ${policySummary(move.to_policy)}` : '',
      move.reason ?? '',
      move.request_id ? longCode(move.request_id) : '',
    ]),
    empty: 'No history.',
  })}
  ${s.paged || s.older ? html`<p class="actions">${s.paged ? html`<a class="button secondary" href="${path}">Newest changes</a>` : ''}${s.older ? html`<a class="button secondary" href="${`${path}?after=${encodeURIComponent(s.older)}`}">Older changes</a>` : ''}</p>` : ''}
</section>`;
}

/** What one history row did, in words. */
export function changeOf(move: AliasMoveItem): string {
  if (move.from_version === null) return `set to ${move.to_version}`;
  if (move.to_version === null) return `deleted (was ${move.from_version})`;
  if (move.from_version !== move.to_version) return `moved ${move.from_version} → ${move.to_version}`;
  if (move.moved_by === null) return 'candidate rolled back';
  if (!move.to_policy) return 'policy deleted';
  return move.from_policy ? 'policy changed' : 'policy set';
}
