import type { IoSchema } from '../../../features/models/payload.js';

// The prediction form of a session's page, generated from the model's input
// schema: one input per property of its top-level object, turned back into the
// JSON body the API takes. The model's own schema still decides (the service
// validates the body as for any API call); this only builds the body.

export type InputKind = 'number' | 'integer' | 'string' | 'boolean' | 'enum' | 'numbers' | 'json';

export interface InputField {
  /** The property name; '' for the whole body when the schema has no top-level object. */
  name: string;
  kind: InputKind;
  required: boolean;
  description?: string;
  /** The JSON text of each allowed value, for an enum. */
  choices?: string[];
  /** What the field shows before anything is typed: the schema's `default` or first example. */
  initial: string;
}

/** The form posts one field per property: more would pass what a dashboard form may carry. */
export const MAX_FORM_PROPERTIES = 40;

type Schema = Record<string, unknown>;

const isObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The fields of the form for a model's input schema. */
export function inputFields(input: IoSchema): InputField[] {
  const schema = input.type === 'json' ? input.schema : undefined;
  const properties = schema && isObject(schema.properties) ? Object.entries(schema.properties) : [];
  const topIsObject = schema !== undefined && (schema.type === 'object' || schema.type === undefined);
  if (!topIsObject || properties.length === 0 || properties.length > MAX_FORM_PROPERTIES) {
    return [{ name: '', kind: 'json', required: true, initial: wholeBodyExample(input) }];
  }
  const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
  // A jsonb column keeps no key order, but arrays keep theirs: the required properties come in the order the schema lists them.
  const rank = (name: string) => (required.includes(name) ? required.indexOf(name) : required.length);
  const ordered = properties.map((entry, index) => ({ entry, index })).sort((a, b) => rank(a.entry[0]) - rank(b.entry[0]) || a.index - b.index);
  return ordered.map(({ entry: [name, property] }) => fieldOf(name, isObject(property) ? property : {}, required.includes(name)));
}

function fieldOf(name: string, property: Schema, required: boolean): InputField {
  const description = typeof property.description === 'string' ? property.description : undefined;
  const sample = property.default !== undefined ? property.default : Array.isArray(property.examples) ? property.examples[0] : undefined;
  const kind = kindOf(property);
  const field: InputField = { name, kind, required, description, initial: sample === undefined ? '' : initialText(kind, sample) };
  if (kind === 'enum') field.choices = (property.enum as unknown[]).map((value) => JSON.stringify(value));
  return field;
}

function kindOf(property: Schema): InputKind {
  if (Array.isArray(property.enum) && property.enum.length > 0) return 'enum';
  if ('const' in property || '$ref' in property) return 'json';
  const type = singleType(property.type);
  if (type === 'number' || type === 'integer' || type === 'string' || type === 'boolean') return type;
  if (type === 'array' && isObject(property.items) && ['number', 'integer'].includes(singleType(property.items.type) ?? '')) return 'numbers';
  return 'json';
}

/** `"number"` or `["number", "null"]` are one type; a true union is left to JSON. */
function singleType(type: unknown): string | undefined {
  if (typeof type === 'string') return type;
  if (!Array.isArray(type)) return undefined;
  const named = type.filter((t) => t !== 'null');
  return named.length === 1 && typeof named[0] === 'string' ? named[0] : undefined;
}

function initialText(kind: InputKind, sample: unknown): string {
  if (kind === 'string' && typeof sample === 'string') return sample;
  if (kind === 'numbers' && Array.isArray(sample)) return sample.join(', ');
  if (kind === 'enum' || kind === 'json') return JSON.stringify(sample);
  return String(sample);
}

function wholeBodyExample(input: IoSchema): string {
  if (input.type === 'file') return JSON.stringify({ fileId: '' });
  const examples = input.schema?.examples;
  return Array.isArray(examples) && examples.length ? JSON.stringify(examples[0], null, 2) : '';
}

/** The form's values for an earlier body (the session's last prediction), so the next one changes only what differs. */
export function valuesFromBody(fields: InputField[], body: string): Record<string, string> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (fields.length === 1 && fields[0]!.name === '') return { '': JSON.stringify(value, null, 2) };
  if (!isObject(value)) return undefined;
  return Object.fromEntries(fields.map((field) => [field.name, field.name in value ? initialText(field.kind, value[field.name]) : '']));
}

/** The form's field names: prefixed, so that no property can take the place of `_csrf` or another control. */
export const formName = (field: InputField) => `input.${field.name}`;

export interface BuiltBody {
  /** The JSON text to send as `request.body`, when every field could be read. */
  body?: string;
  /** A message per field name that could not be read. */
  problems: Record<string, string>;
}

/** The JSON body from the submitted values (by property name); what cannot be read is named, nothing else is judged. */
export function bodyFromForm(fields: InputField[], values: Record<string, string>): BuiltBody {
  const problems: Record<string, string> = {};
  const whole = fields.length === 1 && fields[0]!.name === '' ? fields[0]! : undefined;
  if (whole) {
    const text = (values[''] ?? '').trim();
    if (!text) return { problems: { '': 'Enter the input as JSON.' } };
    try {
      JSON.parse(text);
      return { body: text, problems };
    } catch {
      return { problems: { '': 'This is not valid JSON.' } };
    }
  }
  const body: Record<string, unknown> = {};
  for (const field of fields) {
    const raw = values[field.name] ?? '';
    if (raw.trim() === '') {
      // An empty field leaves the property out; the schema says whether it may be.
      if (field.required) problems[field.name] = 'Required.';
      continue;
    }
    const read = valueOf(field, raw.trim());
    if ('problem' in read) problems[field.name] = read.problem;
    else body[field.name] = read.value;
  }
  return Object.keys(problems).length ? { problems } : { body: JSON.stringify(body), problems };
}

function valueOf(field: InputField, text: string): { value: unknown } | { problem: string } {
  switch (field.kind) {
    case 'string':
      return { value: text };
    case 'number':
    case 'integer':
      return numberOf(text, field.kind);
    case 'boolean':
      return text === 'true' || text === 'false' ? { value: text === 'true' } : { problem: 'Choose true or false.' };
    case 'enum':
      return field.choices?.includes(text) ? { value: JSON.parse(text) } : { problem: 'Choose one of the listed values.' };
    case 'numbers': {
      const numbers = text.split(',').map((part) => numberOf(part.trim(), 'number'));
      const bad = numbers.findIndex((n) => 'problem' in n);
      return bad === -1 ? { value: numbers.map((n) => (n as { value: number }).value) } : { problem: `Item ${bad + 1} is not a number: give numbers separated by commas.` };
    }
    case 'json':
      try {
        return { value: JSON.parse(text) };
      } catch {
        return { problem: 'This is not valid JSON.' };
      }
  }
}

function numberOf(text: string, kind: 'number' | 'integer'): { value: number } | { problem: string } {
  const value = text === '' ? NaN : Number(text);
  if (!Number.isFinite(value)) return { problem: 'Enter a number.' };
  if (kind === 'integer' && !Number.isInteger(value)) return { problem: 'Enter a whole number.' };
  return { value };
}
