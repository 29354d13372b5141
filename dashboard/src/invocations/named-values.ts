import type { Tensor } from '../../../infra/connectors/open-inference/tensors.js';
import type { Bar } from '../charts/bar-chart.js';

// Results that carry one number per name (a class's probability, a
// feature's contribution) read better as a bar chart than as a row of bare
// numbers with their names in small print: these recognize them.

/** Tensor parameters that name the columns of its last dimension, as the demo models and common servers send them. */
export const COLUMN_NAMES = ['classes', 'class_names', 'labels', 'features', 'feature_names', 'names'] as const;
/** A batch longer than this stays a matrix: one chart per row would bury the page. */
export const MAX_CHARTED_ROWS = 5;
/** Field names of a record of numbers that make it per-name values whatever the numbers. */
const PER_NAME_FIELD = /prob|score|contribution|attribution|shap|importance|logit|confidence/i;
/** How far from 1 the sum of probabilities may be (rounding of a model's output). */
const SUM_TOLERANCE = 0.01;

/** A tensor's rows as named values: which parameter named them, and one list per row of the batch. */
export interface NamedRows {
  parameter: string;
  rows: Bar[][];
}

/** The rows of a numeric tensor whose columns a parameter names (`classes: "setosa,versicolor,virginica"`), when the batch is short. */
export function namedRowsOf(tensor: Tensor): NamedRows | undefined {
  const found = columnNamesOf(tensor.parameters);
  const columns = Number(tensor.shape.at(-1));
  if (!found || tensor.shape.length > 2 || found.names.length !== columns || columns < 1) return undefined;
  const rows = tensor.data.length / columns;
  if (!Number.isInteger(rows) || rows < 1 || rows > MAX_CHARTED_ROWS || !tensor.data.every(isFiniteNumber)) return undefined;
  const data = tensor.data as number[];
  return {
    parameter: found.parameter,
    rows: Array.from({ length: rows }, (_, row) => found.names.map((name, column) => ({ name, value: data[row * columns + column]! }))),
  };
}

/** The first naming parameter, as comma-separated text or a list of strings. */
function columnNamesOf(parameters: Record<string, unknown> | undefined): { parameter: string; names: string[] } | undefined {
  for (const parameter of COLUMN_NAMES) {
    const value = parameters?.[parameter];
    if (typeof value === 'string' && value.trim() !== '') return { parameter, names: value.split(',').map((name) => name.trim()) };
    if (Array.isArray(value) && value.length && value.every((name) => typeof name === 'string')) return { parameter, names: value as string[] };
  }
  return undefined;
}

/**
 * A JSON object of two or more numbers as named values, when its field's
 * name says so (`probabilities`, `contributions`, …) or the numbers are
 * probabilities summing to one (a row of `predict_proba`, by class).
 */
export function namedValuesOf(record: Record<string, unknown>, field?: string): Bar[] | undefined {
  const entries = Object.entries(record);
  if (entries.length < 2 || !entries.every(([, value]) => isFiniteNumber(value))) return undefined;
  const bars = entries.map(([name, value]) => ({ name, value: value as number }));
  return (field !== undefined && PER_NAME_FIELD.test(field)) || areProbabilities(bars) ? bars : undefined;
}

function areProbabilities(bars: Bar[]): boolean {
  const sum = bars.reduce((total, bar) => total + bar.value, 0);
  return bars.every((bar) => bar.value >= 0 && bar.value <= 1) && Math.abs(sum - 1) <= SUM_TOLERANCE;
}

const isFiniteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
