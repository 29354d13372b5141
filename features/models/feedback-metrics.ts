/** A property of a feedback schema that the comparison summarises. */
export type FeedbackMetricSpec = { name: string; kind: 'boolean' } | { name: string; kind: 'number' } | { name: string; kind: 'enum'; values: unknown[] };

/**
 * The summarised properties of a feedback schema, in its order: top-level
 * properties that are booleans, numbers (or integers) or enums. A type that
 * also allows null counts as its other type; anything else is left out.
 */
export function feedbackMetrics(schema: Record<string, unknown> | null): FeedbackMetricSpec[] {
  const properties = schema?.properties;
  if (!properties || typeof properties !== 'object') return [];
  const metrics: FeedbackMetricSpec[] = [];
  for (const [name, property] of Object.entries(properties as Record<string, unknown>)) {
    if (!property || typeof property !== 'object') continue;
    const { enum: values, type } = property as { enum?: unknown; type?: unknown };
    if (Array.isArray(values)) {
      metrics.push({ name, kind: 'enum', values });
      continue;
    }
    const kind = singleType(type);
    if (kind === 'boolean') metrics.push({ name, kind: 'boolean' });
    else if (kind === 'number' || kind === 'integer') metrics.push({ name, kind: 'number' });
  }
  return metrics;
}

function singleType(type: unknown): unknown {
  if (!Array.isArray(type)) return type;
  const types = type.filter((t) => t !== 'null');
  return types.length === 1 ? types[0] : undefined;
}

/** One text per JSON value whatever its objects' key order: how an enum value of the schema is matched to a stored one. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
