import { setTimeout as sleep } from 'node:timers/promises';

// A client that posts many requests, a bounded number at once, each under an
// Idempotency-Key of its own, and retries each until it is accepted: after a
// refusal (503 or 409, when its Retry-After says), and after an answer that
// never came (a connection cut, a timeout). It may give up on a first attempt
// on purpose, as an impatient client does, so that retries meet requests the
// server is still running. Every answer is kept for the test to judge.

/** One attempt of one request, as the client saw it. */
export interface Answer {
  index: number;
  attempt: number;
  /** HTTP status, or 0 when no answer came. */
  status: number;
  id?: string;
  messageCode?: string;
  retryAfter?: string | null;
  replayed?: boolean;
  /** Why no answer came: the client's own cut, or the connection's error. */
  error?: string;
}

export interface PostsOptions {
  url: (index: number) => string;
  token: string;
  body: (index: number) => unknown;
  key: (index: number) => string;
  total: number;
  concurrency: number;
  /** No answer within this: the request is cut and retried. */
  timeoutMs: number;
  /** First attempts the client cuts itself after a few milliseconds, before or while the server runs them. */
  cutFirstAttempt: (index: number) => boolean;
  /** Past this, a request no longer accepted is given up (the test then fails naming it). */
  deadline: number;
  /** Told of every answer as it comes. */
  onAnswer?: (answer: Answer) => void;
}

export interface PostsResult {
  answers: Answer[];
  /** Index → the id of the invocation its first 201 named. */
  accepted: Map<number, string>;
  /** Indexes given up: an answer the client does not retry, or the deadline. */
  givenUp: number[];
}

/** Statuses the client retries after their Retry-After: a refusal, and a retry that met its first attempt still running. */
const RETRIED = new Set([503, 409]);

async function send(options: PostsOptions, index: number, attempt: number, cutAfterMs?: number): Promise<Answer> {
  const signal = AbortSignal.timeout(cutAfterMs ?? options.timeoutMs);
  try {
    const response = await fetch(options.url(index), {
      method: 'POST',
      headers: { authorization: `Bearer ${options.token}`, 'content-type': 'application/json', 'idempotency-key': options.key(index) },
      body: JSON.stringify(options.body(index)),
      signal,
    });
    const text = await response.text();
    const body = (response.headers.get('content-type') ?? '').includes('json') && text ? (JSON.parse(text) as { id?: string; message_code?: string }) : {};
    return {
      index,
      attempt,
      status: response.status,
      id: response.status === 201 ? body.id : undefined,
      messageCode: body.message_code,
      retryAfter: response.headers.get('retry-after'),
      replayed: response.headers.get('idempotent-replayed') === 'true',
    };
  } catch (error) {
    return { index, attempt, status: 0, error: cutAfterMs === undefined ? `${(error as Error).name}: ${(error as Error).message}` : 'cut by the client' };
  }
}

/** Posts `total` requests, `concurrency` at a time, each retried with its key until accepted or given up. */
export async function postIdempotently(options: PostsOptions): Promise<PostsResult> {
  const answers: Answer[] = [];
  const accepted = new Map<number, string>();
  const givenUp: number[] = [];
  let next = 0;
  const one = async (index: number) => {
    for (let attempt = 1; Date.now() < options.deadline; attempt++) {
      const cut = attempt === 1 && options.cutFirstAttempt(index) ? 1 + (index % 20) : undefined;
      const answer = await send(options, index, attempt, cut);
      answers.push(answer);
      options.onAnswer?.(answer);
      if (answer.status === 201) return void accepted.set(index, answer.id!);
      if (answer.status === 0) await sleep(50);
      else if (RETRIED.has(answer.status) && answer.retryAfter) await sleep(Number(answer.retryAfter) * 1000);
      else break;
    }
    givenUp.push(index);
  };
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (next < options.total) await one(next++);
    }),
  );
  return { answers, accepted, givenUp };
}
