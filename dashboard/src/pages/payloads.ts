import { html, type Html } from '../web/html.js';
import type { Tensor } from '../../../infra/connectors/open-inference/tensors.js';
import { barChart } from '../charts/bar-chart.js';
import { namedRowsOf, namedValuesOf } from '../invocations/named-values.js';

// Request bodies, model results and feedback are JSON text: shown as what
// they say (tensors with their values, fields with theirs), never as raw JSON.

/** Values shown per tensor or list; a page of a long batch stays readable. */
export const MAX_VALUES = 48;
/** A matrix wider than this reads better as a list of its values. */
const MAX_COLUMNS = 12;
/** Nested objects deeper than this are shown as compact text. */
const MAX_DEPTH = 3;

export interface PayloadOptions {
  /** Per-name values (class probabilities, feature contributions) as bar charts: for results, not for what was sent. */
  charts?: boolean;
}

/** A payload as the user reads it: tensors, fields, a list or plain text. */
export function payload(text: string, options: PayloadOptions = {}): Html {
  if (text.trim() === '') return html`<span class="muted">empty</span>`;
  const value = parsed(text);
  if (value === undefined) return html`<p class="payload-text">${text}</p>`;
  return valueView(value, 0, options);
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** `field`: the name of the field the value is in, which may say what its numbers are. */
function valueView(value: unknown, depth: number, options: PayloadOptions, field?: string): Html {
  const tensors = tensorsOf(value);
  if (tensors) return tensorsView(tensors, (value as { parameters?: Record<string, unknown> }).parameters, options);
  if (Array.isArray(value)) return listView(value, depth, options, field);
  if (!isRecord(value)) return scalar(value);
  const named = options.charts ? namedValuesOf(value, field) : undefined;
  if (named) return barChart(named, { title: field ?? 'Values', format: numberText });
  return depth >= MAX_DEPTH ? html`<code>${JSON.stringify(value)}</code>` : fieldsView(value, depth, options);
}

/** The tensors of an Open Inference response (`outputs`) or request (`inputs`). */
function tensorsOf(value: unknown): Tensor[] | undefined {
  if (!isRecord(value)) return undefined;
  const tensors = Array.isArray(value.outputs) ? value.outputs : Array.isArray(value.inputs) ? value.inputs : undefined;
  return tensors?.length && tensors.every(isTensor) ? tensors : undefined;
}

function isTensor(value: unknown): value is Tensor {
  return isRecord(value) && typeof value.name === 'string' && typeof value.datatype === 'string' && Array.isArray(value.shape) && Array.isArray(value.data);
}

function tensorsView(tensors: Tensor[], parameters: Record<string, unknown> | undefined, options: PayloadOptions): Html {
  return html`<div class="tensors">${tensors.map((tensor) => tensorView(tensor, options))}${parameters ? parametersView(parameters) : ''}</div>`;
}

function tensorView(tensor: Tensor, options: PayloadOptions): Html {
  const named = options.charts ? namedRowsOf(tensor) : undefined;
  // The names drawn beside the bars need not be repeated under them.
  const parameters = named ? Object.fromEntries(Object.entries(tensor.parameters ?? {}).filter(([name]) => name !== named.parameter)) : tensor.parameters;
  return html`<div class="tensor">
  <p class="tensor-name"><strong>${tensor.name}</strong> <span class="muted">${tensor.datatype} [${tensor.shape.join(' × ')}]</span></p>
  ${named ? named.rows.map((row, index) => barChart(row, { title: named.rows.length > 1 ? `${tensor.name}, row ${index + 1}` : tensor.name, format: numberText })) : dataView(tensor)}
  ${parameters ? parametersView(parameters) : ''}
</div>`;
}

function dataView(tensor: Tensor): Html {
  const columns = tensor.shape.length === 2 ? Number(tensor.shape[1]) : 0;
  const asRows = columns > 1 && columns <= MAX_COLUMNS && tensor.data.length === Number(tensor.shape[0]) * columns;
  return asRows ? matrixView(tensor.data, columns) : valuesView(tensor.data);
}

/** A two-dimensional tensor, one row of values per line (a batch of one is one line). */
function matrixView(data: unknown[], columns: number): Html {
  const rows: unknown[][] = [];
  for (let i = 0; i < data.length && rows.length * columns < MAX_VALUES; i += columns) rows.push(data.slice(i, i + columns));
  const hidden = data.length / columns - rows.length;
  return html`<table class="matrix"><tbody>${rows.map((row) => html`<tr>${row.map((v) => html`<td>${scalar(v)}</td>`)}</tr>`)}</tbody></table>${more(hidden, 'rows')}`;
}

function valuesView(data: unknown[]): Html {
  const shown = data.slice(0, MAX_VALUES);
  return html`<ul class="values">${shown.map((v) => html`<li>${scalar(v)}</li>`)}</ul>${more(data.length - shown.length, 'values')}`;
}

function listView(items: unknown[], depth: number, options: PayloadOptions, field?: string): Html {
  if (items.every((item) => !isRecord(item) && !Array.isArray(item))) return valuesView(items);
  const shown = items.slice(0, MAX_VALUES);
  return html`<ol class="items">${shown.map((item) => html`<li>${valueView(item, depth + 1, options, field)}</li>`)}</ol>${more(items.length - shown.length, 'items')}`;
}

function fieldsView(record: Record<string, unknown>, depth: number, options: PayloadOptions): Html {
  const entries = Object.entries(record);
  if (!entries.length) return html`<span class="muted">no fields</span>`;
  return html`<dl class="fields">${entries.map(([name, value]) => html`<dt>${name}</dt><dd>${valueView(value, depth + 1, options, name)}</dd>`)}</dl>`;
}

/** Parameters of a tensor or response (the explanation method, class names…), in small print. */
function parametersView(parameters: Record<string, unknown>): Html {
  const entries = Object.entries(parameters).filter(([name]) => name !== 'context');
  if (!entries.length) return html``;
  return html`<dl class="fields parameters">${entries.map(([name, value]) => html`<dt>${name}</dt><dd>${isRecord(value) || Array.isArray(value) ? JSON.stringify(value) : scalar(value)}</dd>`)}</dl>`;
}

function scalar(value: unknown): Html {
  if (value === null || value === undefined) return html`<span class="muted">null</span>`;
  if (typeof value === 'number') return html`${numberText(value)}`;
  if (typeof value === 'string' || typeof value === 'boolean') return html`${String(value)}`;
  return html`<code>${JSON.stringify(value)}</code>`;
}

/** Four decimals for readability (small numbers keep four significant digits). */
export function numberText(value: number): string {
  if (Number.isInteger(value) || !Number.isFinite(value)) return String(value);
  return Math.abs(value) >= 1 ? String(Math.round(value * 1e4) / 1e4) : String(Number(value.toPrecision(4)));
}

const more = (count: number, what: string) => (count > 0 ? html`<p class="muted more">and ${String(count)} more ${what}</p>` : html``);

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
