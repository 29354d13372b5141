import type { Response } from 'express';

/** A JSON answer as it goes out: its status and body. */
export interface JsonAnswer {
  status: number;
  body: unknown;
}

interface Hooks {
  checks: Array<(answer: JsonAnswer) => JsonAnswer>;
  watchers: Array<(answer: JsonAnswer) => void>;
}

const hooked = new WeakMap<Response, Hooks>();

/**
 * The one place `res.json` is replaced, so every part that must see a JSON
 * answer (the document's response check, the audit record, the idempotency
 * key's kept answer) sees the same one: the checks first, each able to
 * replace the answer, in the order they were given; then it is sent; then
 * the watchers see what went out.
 */
function hooksOf(res: Response): Hooks {
  let hooks = hooked.get(res);
  if (hooks) return hooks;
  hooks = { checks: [], watchers: [] };
  hooked.set(res, hooks);
  const { checks, watchers } = hooks;
  const send = res.json.bind(res);
  res.json = (body: unknown) => {
    let answer: JsonAnswer = { status: res.statusCode, body };
    for (const check of checks) answer = check(answer);
    res.status(answer.status);
    const sent = send(answer.body);
    for (const watch of watchers) watch(answer);
    return sent;
  };
  return hooks;
}

/** Runs `check` on the JSON answer before it is sent; what it returns is sent instead. */
export function checkJsonAnswer(res: Response, check: (answer: JsonAnswer) => JsonAnswer): void {
  hooksOf(res).checks.push(check);
}

/** Calls `watch` with the JSON answer once it was sent, as it went out. */
export function watchJsonAnswer(res: Response, watch: (answer: JsonAnswer) => void): void {
  hooksOf(res).watchers.push(watch);
}
