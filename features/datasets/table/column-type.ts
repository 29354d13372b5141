// The types of a dataset table's columns, and how a column's type widens as
// values are met: a column holds every value it is given without loss, so an
// integer column that meets a fraction becomes double, a scalar column that
// meets a list becomes a list, and anything else that disagrees becomes JSON text.

/** What one value (or list element) is; `unknown` only until a value says. */
export type BaseType = 'unknown' | 'boolean' | 'int64' | 'double' | 'string' | 'timestamp' | 'json';

export interface ColumnType {
  base: BaseType;
  /** A list of `base` values (never of json). */
  list: boolean;
}

/** The name a column's type goes by in manifests and file metadata: `double`, `list<string>`, `json`, … */
export type ColumnTypeName = string;

export const UNKNOWN: ColumnType = { base: 'unknown', list: false };
export const JSON_TYPE: ColumnType = { base: 'json', list: false };
export const scalar = (base: BaseType): ColumnType => ({ base, list: false });

/** The narrowest type that holds values of both types. */
export function widen(a: ColumnType, b: ColumnType): ColumnType {
  const base = widenBase(a.base, b.base);
  return base === 'json' ? JSON_TYPE : { base, list: a.list || b.list };
}

function widenBase(a: BaseType, b: BaseType): BaseType {
  if (a === b || b === 'unknown') return a;
  if (a === 'unknown') return b;
  if ((a === 'int64' && b === 'double') || (a === 'double' && b === 'int64')) return 'double';
  return 'json';
}

/** The type of one JSON value; null says nothing (every column is nullable). */
export function typeOfValue(value: unknown): ColumnType {
  if (value === null || value === undefined) return UNKNOWN;
  if (Array.isArray(value)) {
    const element = value.reduce<BaseType>((type, item) => widenBase(type, baseOfScalar(item)), 'unknown');
    return element === 'json' ? JSON_TYPE : { base: element, list: true };
  }
  return scalar(baseOfScalar(value));
}

function baseOfScalar(value: unknown): BaseType {
  if (value === null || value === undefined) return 'unknown';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isSafeInteger(value) ? 'int64' : 'double';
  if (typeof value === 'string') return 'string';
  return 'json';
}

const SCHEMA_BASES: Record<string, BaseType> = { boolean: 'boolean', integer: 'int64', number: 'double', string: 'string' };

/**
 * The type a JSON Schema declares for a property: scalars and arrays of
 * scalars as themselves, objects and anything nested as JSON text, nothing
 * when the schema does not say (the values will).
 */
export function typeOfSchema(schema: unknown): ColumnType {
  const node = withoutNull(schema);
  if (!node) return UNKNOWN;
  const type = node.type;
  if (type === 'array') {
    const items = typeOfSchema(node.items);
    return items.list || items.base === 'json' ? JSON_TYPE : { base: items.base, list: true };
  }
  if (type === 'object') return JSON_TYPE;
  return typeof type === 'string' && SCHEMA_BASES[type] ? scalar(SCHEMA_BASES[type]) : UNKNOWN;
}

/** The one non-null alternative of `type: [T, 'null']` or `anyOf/oneOf: [S, {type: 'null'}]`. */
function withoutNull(schema: unknown): Record<string, unknown> | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return undefined;
  const node = schema as Record<string, unknown>;
  if (Array.isArray(node.type)) {
    const types = node.type.filter((t) => t !== 'null');
    return types.length === 1 ? { ...node, type: types[0] } : undefined;
  }
  const alternatives = (node.anyOf ?? node.oneOf) as unknown;
  if (node.type === undefined && Array.isArray(alternatives)) {
    const rest = alternatives.filter((alt) => !(typeof alt === 'object' && alt !== null && (alt as { type?: unknown }).type === 'null'));
    return rest.length === 1 ? withoutNull(rest[0]) : undefined;
  }
  return node;
}

/** A type once every value was seen: a column that met none holds text. */
export function settled(type: ColumnType): ColumnType {
  return type.base === 'unknown' ? { base: 'string', list: type.list } : type;
}

export function typeName(type: ColumnType): ColumnTypeName {
  const base = type.base === 'unknown' ? 'string' : type.base;
  return type.list ? `list<${base}>` : base;
}

/**
 * A value as its column holds it: numbers, booleans, text, lists of them, or
 * JSON text; timestamps stay ISO 8601 text here (each file format writes them its way).
 */
export function cellValue(value: unknown, type: ColumnType): unknown {
  if (value === null || value === undefined) return null;
  if (type.base === 'json') return JSON.stringify(value);
  if (type.list) return (Array.isArray(value) ? value : [value]).map((item) => scalarValue(item, type.base));
  return scalarValue(value, type.base);
}

function scalarValue(value: unknown, base: BaseType): unknown {
  if (value === null || value === undefined) return null;
  if (base === 'double') return Number(value);
  if (base === 'string' || base === 'unknown') return typeof value === 'string' ? value : JSON.stringify(value);
  return value;
}
