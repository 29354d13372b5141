import { at } from '../context.js';

// Addresses of the pages on sessions and datasets, built in one place.

export interface ModelRef {
  code: string;
  version: string;
}

/** A model version as one form value, as the API writes model keys: `code:version` (neither may hold a colon). */
export const modelKey = (model: ModelRef) => `${model.code}:${model.version}`;

export function parseModelKey(value: string): ModelRef | undefined {
  const colon = value.indexOf(':');
  if (colon <= 0 || colon === value.length - 1) return undefined;
  return { code: value.slice(0, colon), version: value.slice(colon + 1) };
}

const query = (params: Record<string, string | undefined>) => {
  const search = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => Boolean(e[1]))).toString();
  return search ? `?${search}` : '';
};

export const sessionsLink = (params: { model?: string; state?: string; after?: string } = {}) => at(`/sessions${query(params)}`);

/** Where a form starts a session with the model (POST). */
export const modelSessionsPath = (model: ModelRef) => at(`/sessions/${encodeURIComponent(model.code)}/${encodeURIComponent(model.version)}`);

export const sessionLink = (model: ModelRef, sessionId: string, after?: string) => `${modelSessionsPath(model)}/${sessionId}${query({ after })}`;

export const datasetsLink = (params: { model?: string; session?: string; after?: string } = {}) => at(`/datasets${query(params)}`);
