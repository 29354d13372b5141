import type { InvocationRow } from '../invocations/store.js';
import { presentInvocation } from '../invocations/present.js';

/** What a record says of the model version its session belongs to. */
export interface RecordModel {
  model_code: string;
  version: string;
}

type Presented = ReturnType<typeof presentInvocation>;

/** One line of a dataset: an invocation with its explanations and the feedback given on it. */
export interface DatasetRecord {
  invocation_id: string;
  session_id: string;
  order: number;
  model_code: string;
  model_version: string;
  type: 'PREDICT' | 'EXPLAIN';
  request_type: string;
  input: string;
  status: string;
  output: string;
  error: string | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  /** A shadow invocation's primary: the prediction of the caller's session it copies on a shadow version; null otherwise. */
  shadow_of: string | null;
  explanations: Array<{
    invocation_id: string;
    order: number;
    related_to: string;
    model_key: string;
    status: string;
    output: string;
    error: string | null;
    created_at: string;
    completed_at: string | null;
    feedback: FeedbackEntry[];
  }>;
  feedback: FeedbackEntry[];
}

interface FeedbackEntry {
  invocation_id: string;
  order: number;
  body: string;
  created_at: string;
}

const feedbackEntry = (f: Presented): FeedbackEntry => ({ invocation_id: f.id, order: f.order, body: f.request.body, created_at: f.created_at });

/**
 * The records of one session, in order: each prediction (or explanation asked
 * for directly) with the explanation chain that followed it and the feedback
 * on each. The fields are those the API shows for the same invocations.
 */
export function sessionRecords(model: RecordModel, rows: InvocationRow[]): DatasetRecord[] {
  const invocations = rows.map((row) => presentInvocation(row));
  const shadowOf = new Map(rows.map((row) => [row.id, row.shadow_of ?? null]));
  const ids = new Set(invocations.map((i) => i.id));
  const feedbackOn = groupBy(invocations.filter((i) => i.type === 'DATA_SUBMISSION'), (i) => i.related_to);
  const explanationsOf = groupBy(invocations.filter((i) => i.type === 'EXPLAIN' && i.related_to && ids.has(i.related_to)), (i) => i.related_to);
  const roots = invocations.filter((i) => i.type !== 'DATA_SUBMISSION' && !(i.type === 'EXPLAIN' && i.related_to && ids.has(i.related_to)));
  return roots.map((root) => ({
    invocation_id: root.id,
    session_id: root.request.session_id,
    order: root.order,
    model_code: model.model_code,
    model_version: model.version,
    type: root.type as 'PREDICT' | 'EXPLAIN',
    request_type: root.request.request_type,
    input: root.request.body,
    status: root.status,
    output: root.response,
    error: root.error,
    created_at: root.created_at,
    started_at: root.started_at,
    completed_at: root.completed_at,
    shadow_of: shadowOf.get(root.id) ?? null,
    explanations: chainOf(root.id, explanationsOf).map((e) => ({
      invocation_id: e.id,
      order: e.order,
      related_to: e.related_to!,
      model_key: e.model_key,
      status: e.status,
      output: e.response,
      error: e.error,
      created_at: e.created_at,
      completed_at: e.completed_at,
      feedback: (feedbackOn.get(e.id) ?? []).map(feedbackEntry),
    })),
    feedback: (feedbackOn.get(root.id) ?? []).map(feedbackEntry),
  }));
}

/** The explanations that follow an invocation, explainer after explainer, in session order. */
function chainOf(id: string, explanationsOf: Map<string | null | undefined, Presented[]>): Presented[] {
  const chain: Presented[] = [];
  const pending = [...(explanationsOf.get(id) ?? [])];
  while (pending.length > 0) {
    const next = pending.shift()!;
    chain.push(next);
    pending.push(...(explanationsOf.get(next.id) ?? []));
  }
  return chain.sort((a, b) => a.order - b.order);
}

function groupBy<T, K>(items: T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

const nullableString = { type: ['string', 'null'] };
const feedbackSchema = {
  type: 'object',
  required: ['invocation_id', 'order', 'body', 'created_at'],
  properties: { invocation_id: { type: 'string' }, order: { type: 'integer' }, body: { type: 'string' }, created_at: { type: 'string', format: 'date-time' } },
};

/** The JSON Schema of one line, written into every manifest. */
export const RECORD_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'didyma dataset record',
  type: 'object',
  required: ['invocation_id', 'session_id', 'order', 'model_code', 'model_version', 'type', 'request_type', 'input', 'status', 'output', 'error', 'created_at', 'started_at', 'completed_at', 'shadow_of', 'explanations', 'feedback'],
  properties: {
    invocation_id: { type: 'string' },
    session_id: { type: 'string' },
    order: { type: 'integer' },
    model_code: { type: 'string' },
    model_version: { type: 'string' },
    type: { type: 'string', enum: ['PREDICT', 'EXPLAIN'] },
    request_type: { type: 'string' },
    input: { type: 'string', description: 'The request body, as sent.' },
    status: { type: 'string', enum: ['QUEUED', 'IN_PROGRESS', 'COMPLETED', 'ERROR', 'CANCELLED'] },
    output: { type: 'string', description: 'The response when COMPLETED, else empty.' },
    error: nullableString,
    created_at: { type: 'string', format: 'date-time' },
    started_at: nullableString,
    completed_at: nullableString,
    shadow_of: { type: ['string', 'null'], description: "A shadow invocation's primary invocation (its id); null for the caller's own invocations." },
    explanations: {
      type: 'array',
      items: {
        type: 'object',
        required: ['invocation_id', 'order', 'related_to', 'model_key', 'status', 'output', 'error', 'created_at', 'completed_at', 'feedback'],
        properties: {
          invocation_id: { type: 'string' },
          order: { type: 'integer' },
          related_to: { type: 'string' },
          model_key: { type: 'string' },
          status: { type: 'string' },
          output: { type: 'string' },
          error: nullableString,
          created_at: { type: 'string', format: 'date-time' },
          completed_at: nullableString,
          feedback: { type: 'array', items: feedbackSchema },
        },
      },
    },
    feedback: { type: 'array', items: feedbackSchema },
  },
} as const;
