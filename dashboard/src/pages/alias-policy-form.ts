import { html, type Html } from '../web/html.js';
import { InputError } from '../../../kernel/errors/errors.js';
import { csrfField, selectField, textField } from './components.js';

// A traffic policy as a supervisor types it: weights as `version=weight`
// lines, shadows and feedback guards as lines too, turned into the body the
// policy service takes (which owns every rule; only the line shapes are checked here).

export interface PolicyDraft {
  weights: string;
  sticky: string;
  shadows: string;
  min_invocations: string;
  max_error_rate: string;
  max_p99_run_ms: string;
  /** `property rate 0.8` or `property mean 0.6`, one guard a line. */
  feedback: string;
}

export const POLICY_FIELDS = ['weights', 'sticky', 'shadows', 'min_invocations', 'max_error_rate', 'max_p99_run_ms', 'feedback'] as const;

export interface ShownPolicy {
  sticky: string;
  weights: Array<{ version: string; weight: number }>;
  shadows: string[];
  guards?: { min_invocations?: number; max_error_rate?: number; max_p99_run_ms?: number; feedback?: Array<{ property: string; min_rate?: number; min_mean?: number }> } | null;
}

/** The form filled in with the alias's policy, or with all its sessions on its version. */
export function draftOf(policy: ShownPolicy | null, version: string): PolicyDraft {
  const guards = policy?.guards ?? {};
  return {
    weights: (policy?.weights ?? [{ version, weight: 100 }]).map((w) => `${w.version}=${w.weight}`).join('\n'),
    sticky: policy?.sticky ?? 'session',
    shadows: (policy?.shadows ?? []).join(', '),
    min_invocations: guards.min_invocations === undefined ? '' : String(guards.min_invocations),
    max_error_rate: guards.max_error_rate === undefined ? '' : String(guards.max_error_rate),
    max_p99_run_ms: guards.max_p99_run_ms === undefined ? '' : String(guards.max_p99_run_ms),
    feedback: (guards.feedback ?? []).map((g) => (g.min_rate === undefined ? `${g.property} mean ${g.min_mean}` : `${g.property} rate ${g.min_rate}`)).join('\n'),
  };
}

/** The policy body of a draft; a line of the wrong shape is a 400 naming it, the rest is the service's to judge. */
export function policyBodyOf(draft: PolicyDraft): Record<string, unknown> {
  const weights = linesOf(draft.weights).map((line, i) => {
    const match = /^(\S+?)\s*=\s*(\S+)$/.exec(line);
    if (!match) throw new InputError(`weights: line ${i + 1} (${line}) is not version=weight.`, [{ field: 'weights', message: 'one version=weight a line' }]);
    return { version: match[1], weight: numberOrText(match[2]!) };
  });
  const feedback = linesOf(draft.feedback).map((line, i) => {
    const match = /^(\S+)\s+(rate|mean)\s+(\S+)$/.exec(line);
    if (!match) throw new InputError(`guards.feedback: line ${i + 1} (${line}) is not "property rate 0.8" or "property mean 0.6".`, [{ field: 'guards.feedback', message: 'one guard a line' }]);
    return { property: match[1], [match[2] === 'rate' ? 'min_rate' : 'min_mean']: numberOrText(match[3]!) };
  });
  const guards = {
    ...optional('min_invocations', draft.min_invocations),
    ...optional('max_error_rate', draft.max_error_rate),
    ...optional('max_p99_run_ms', draft.max_p99_run_ms),
    ...(feedback.length && { feedback }),
  };
  return {
    sticky: draft.sticky,
    weights,
    shadows: draft.shadows.split(/[\s,]+/).filter(Boolean),
    ...(Object.keys(guards).length && { guards }),
  };
}

export function policyForm(action: string, csrf: string, draft: PolicyDraft): Html {
  return html`<form class="card policy-form" method="post" action="${action}">
  ${csrfField(csrf)}
  <div class="field">
    <label for="field-weights">Weights</label>
    <textarea id="field-weights" name="weights" rows="4" spellcheck="false" required aria-describedby="field-weights-hint">${draft.weights}</textarea>
    <p class="hint" id="field-weights-hint">One <code>version=weight</code> a line, integers summing to 100, the alias’s own version among them.</p>
  </div>
  ${selectField({ name: 'sticky', label: 'Sticky', choices: [{ value: 'session', label: 'session: each new session picks' }, { value: 'user', label: 'user: all of a user’s sessions run one version' }], value: draft.sticky })}
  ${textField({ name: 'shadows', label: 'Shadows', value: draft.shadows, hint: 'Versions that get a copy of each prediction, separated by commas.' })}
  <fieldset><legend>Guards: roll a candidate back when it trips one</legend>
    ${textField({ name: 'min_invocations', label: 'Minimum invocations', value: draft.min_invocations, hint: 'Judged from that many finished invocations on (100 when blank and another guard is set).' })}
    ${textField({ name: 'max_error_rate', label: 'Maximum error rate', value: draft.max_error_rate, hint: 'From 0 to 1, e.g. 0.05.' })}
    ${textField({ name: 'max_p99_run_ms', label: 'Maximum p99 run time (ms)', value: draft.max_p99_run_ms })}
    <div class="field">
      <label for="field-feedback">Feedback <span class="optional">(optional)</span></label>
      <textarea id="field-feedback" name="feedback" rows="2" spellcheck="false" aria-describedby="field-feedback-hint">${draft.feedback}</textarea>
      <p class="hint" id="field-feedback-hint">One guard a line: <code>correct rate 0.8</code> (a boolean property) or <code>score mean 0.6</code> (a number).</p>
    </div>
  </fieldset>
  <button type="submit" class="button primary">Set the policy</button>
</form>`;
}

const linesOf = (text: string) => text.split(/\r?\n/).map((line) => line.trim()).filter(Boolean);

/** A number as typed; anything else goes as text, so the service's message names the field. */
const numberOrText = (text: string): number | string => (/^-?\d+(\.\d+)?(e-?\d+)?$/i.test(text) ? Number(text) : text);

const optional = (name: string, value: string) => (value.trim() ? { [name]: numberOrText(value.trim()) } : {});
