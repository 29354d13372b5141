import { html, type Html } from '../web/html.js';
import { alertBox, checkbox, csrfField } from './components.js';
import { formName, type InputField } from '../invocations/input-form.js';

// The form that queues a prediction in a session, one input per property of
// the model's input schema (dashboard/src/invocations/input-form.ts).

export interface PredictionForm {
  action: string;
  csrfToken: string;
  fields: InputField[];
  /** What the model's input schema says of its input. */
  description?: string;
  /** What was submitted, by property name: shown again when it was refused. */
  values?: Record<string, string>;
  problems?: Record<string, string>;
  /** Why the platform refused the whole prediction (the schema's verdict, a closed session). */
  error?: string;
  /** The model has an explainer: offer to explain the prediction. */
  explainable: boolean;
  withExplanation?: boolean;
}

export function predictionForm(form: PredictionForm): Html {
  return html`<form class="card stack prediction-form" method="post" action="${form.action}" aria-labelledby="new-prediction" novalidate>
  <h2 id="new-prediction">New prediction</h2>
  ${form.error ? alertBox('error', form.error) : ''}
  ${csrfField(form.csrfToken)}
  ${form.description ? html`<p class="muted">${form.description}</p>` : ''}
  <div class="inputs">${form.fields.map((field, index) => inputView(form, field, index))}</div>
  ${form.explainable ? checkbox({ name: 'with_explanation', label: 'Explain the prediction too', checked: form.withExplanation }) : ''}
  <p class="actions"><button type="submit" class="button primary">Queue the prediction</button></p>
</form>`;
}

function inputView(form: PredictionForm, field: InputField, index: number): Html {
  const id = `input-${index}`;
  const value = form.values?.[field.name] ?? field.initial;
  const problem = form.problems?.[field.name];
  const hint = hintOf(field);
  const described = [hint ? `${id}-hint` : '', problem ? `${id}-problem` : ''].filter(Boolean).join(' ');
  const label = field.name === '' ? 'Input (JSON)' : field.name;
  const common = html` id="${id}" name="${formName(field)}"${described ? html` aria-describedby="${described}"` : ''}${problem ? html` aria-invalid="true"` : ''}`;
  const classes = ['field', field.kind === 'json' ? 'field-wide' : '', problem ? 'field-invalid' : ''].filter(Boolean).join(' ');
  return html`<div class="${classes}">
  <label for="${id}">${label}${field.required ? '' : html` <span class="optional">(optional)</span>`}</label>
  ${control(field, value, common)}
  ${hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : ''}
  ${problem ? html`<p class="problem" id="${id}-problem">${problem}</p>` : ''}
</div>`;
}

function control(field: InputField, value: string, common: Html): Html {
  switch (field.kind) {
    case 'boolean':
      return select(common, ['true', 'false'].map((v) => ({ value: v, label: v })), value, field.required);
    case 'enum':
      return select(common, (field.choices ?? []).map((v) => ({ value: v, label: choiceLabel(v) })), value, field.required);
    case 'json':
      return html`<textarea${common} rows="${field.name === '' ? '8' : '3'}" spellcheck="false">${value}</textarea>`;
    case 'number':
    case 'integer':
      return html`<input${common} type="text" inputmode="${field.kind === 'integer' ? 'numeric' : 'decimal'}" value="${value}" autocomplete="off">`;
    default:
      return html`<input${common} type="text" value="${value}" autocomplete="off">`;
  }
}

function select(common: Html, choices: Array<{ value: string; label: string }>, value: string, required: boolean): Html {
  const blank = required && value !== '' ? '' : html`<option value=""${value === '' ? html` selected` : ''}>${required ? 'Choose…' : '(leave out)'}</option>`;
  return html`<select${common}>${blank}${choices.map((c) => html`<option value="${c.value}"${c.value === value ? html` selected` : ''}>${c.label}</option>`)}</select>`;
}

/** A string choice reads without its JSON quotes; numbers, booleans and null as written. */
function choiceLabel(json: string): string {
  const value: unknown = JSON.parse(json);
  return typeof value === 'string' ? value : json;
}

const KIND_HINTS: Record<InputField['kind'], string> = {
  number: 'A number.',
  integer: 'A whole number.',
  string: '',
  boolean: '',
  enum: '',
  numbers: 'Numbers separated by commas.',
  json: 'JSON.',
};

function hintOf(field: InputField): string {
  return [field.description ?? '', field.name === '' ? 'The whole input, as JSON.' : KIND_HINTS[field.kind]].filter(Boolean).join(' ');
}
