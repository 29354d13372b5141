import { html, type Html } from '../web/html.js';
import type { Explanation, InvocationView, Thread } from '../invocations/threads.js';
import { durationText, latencyOf } from '../invocations/latency.js';
import { alertBox, badge, code, timeText } from './components.js';
import { datasetsLink, modelKey, sessionLink, sessionsLink, type ModelRef } from './links.js';
import { payload } from './payloads.js';

// One session of the caller: a page of its predictions (or, in an explainer's
// session, its explanations), each with its explanation chain and feedback.

export interface SessionPage {
  model: ModelRef & { name: string };
  sessionId: string;
  /** PREDICT in a model's session, EXPLAIN in an explainer's. */
  kind: 'PREDICT' | 'EXPLAIN';
  threads: Thread[];
  total: number;
  /** How many of the session's predictions (explanations) are older than this page: the oldest shown is number olderCount + 1. */
  olderCount: number;
  older?: string;
  paged: boolean;
  /** False when some explanations or feedback did not fit in what one page reads. */
  complete: boolean;
  /** The form that queues a new prediction (a model's sessions only). */
  form?: Html;
  /** Reload while an invocation shown is still running (dashboard.js); never on a page that answers a POST. */
  watch?: boolean;
}

export function sessionBody(page: SessionPage): Html {
  const { model } = page;
  const noun = page.kind === 'PREDICT' ? 'prediction' : 'explanation';
  return html`<p class="lead">${code(page.sessionId)} of <strong>${model.name}</strong> (${code(model.code)} ${code(model.version)})</p>
<p class="actions">
  <a class="button secondary" href="${sessionsLink({ model: modelKey(model) })}">All your sessions of this model</a>
  <a class="button secondary" href="${datasetsLink({ model: modelKey(model), session: page.sessionId })}#export">Export as a dataset</a>
</p>
${page.form ?? ''}
<p class="muted">${String(page.total)} ${page.total === 1 ? noun : `${noun}s`}, newest first and numbered from the oldest, each with its explanations and feedback.</p>
${page.complete ? '' : alertBox('warning', 'Some explanations or feedback of this page are too many to show here; the API lists them all (related_to).')}
${page.watch && page.threads.some(running) ? html`<p class="muted" data-reload-while-running>Results still running are shown as they come (this page reloads itself for a minute unless you type in the form).</p>` : ''}
${page.threads.length ? page.threads.map((thread, index) => threadView(thread, page.olderCount + page.threads.length - index)) : html`<p class="empty">No ${noun}s in this session yet.</p>`}
<p class="actions">
  ${page.paged ? html`<a class="button secondary" href="${sessionLink(model, page.sessionId)}">Newest ${noun}s</a>` : ''}
  ${page.older ? html`<a class="button secondary" href="${sessionLink(model, page.sessionId, page.older)}">Older ${noun}s</a>` : ''}
</p>`;
}

const UNFINISHED = new Set(['QUEUED', 'IN_PROGRESS']);

/** The prediction, or one of its explanations, has no outcome yet (a prediction with `with_explanation` gets its explanation later). */
function running(thread: Thread): boolean {
  return UNFINISHED.has(thread.invocation.status) || thread.explanations.some((e) => UNFINISHED.has(e.invocation.status));
}

/** `position`: the invocation's place among the session's predictions (explanations), the oldest being 1. */
function threadView(thread: Thread, position: number): Html {
  const { invocation } = thread;
  const id = `invocation-${invocation.id}`;
  const name = `${invocation.type === 'PREDICT' ? 'Prediction' : 'Explanation'} ${position}`;
  return html`<article class="card invocation" aria-labelledby="${id}">
  <h2 id="${id}">${name} ${statusBadge(invocation.status)}</h2>
  <p class="muted">${code(invocation.id)} · ${timeText(invocation.created_at)}</p>
  ${latencyView(invocation)}
  <div class="exchange">
    <section><h3>Input</h3>${payload(invocation.request.body)}</section>
    <section><h3>Result</h3>${result(invocation)}</section>
  </div>
  ${thread.explanations.length ? html`<h3>Explanations</h3>${thread.explanations.map((explanation, index) => explanationView(explanation, index + 1, name))}` : ''}
  <h3>Feedback</h3>
  ${feedbackView(thread.feedback)}
</article>`;
}

/** `position`: its place in the chain of explanations of `of` (a prediction's name). */
function explanationView({ invocation, feedback }: Explanation, position: number, of: string): Html {
  return html`<section class="explanation" aria-label="Explanation ${String(position)} of ${of.toLowerCase()}">
  <p><strong>Explanation ${String(position)}</strong> ${invocation.model_key ? code(invocation.model_key) : ''} ${statusBadge(invocation.status)}</p>
  ${latencyView(invocation)}
  ${result(invocation)}
  ${feedback.length ? html`<h4>Feedback on this explanation</h4>${feedbackView(feedback)}` : ''}
</section>`;
}

/** How long the invocation waited for an executor and how long it ran; a dash for what has not happened. */
function latencyView(invocation: InvocationView): Html {
  const { wait, run } = latencyOf(invocation);
  return html`<dl class="latency"><dt>Queue wait</dt><dd>${durationText(wait)}</dd><dt>Run time</dt><dd>${durationText(run)}</dd></dl>`;
}

function feedbackView(feedback: InvocationView[]): Html {
  if (!feedback.length) return html`<p class="empty">No feedback yet.</p>`;
  return html`<ul class="feedback">${feedback.map((f) => html`<li>${payload(f.request.body)}<p class="muted">${timeText(f.created_at)}</p></li>`)}</ul>`;
}

/** The output once COMPLETED, the reason of an ERROR, else where it stands. */
function result(invocation: InvocationView): Html {
  if (invocation.status === 'COMPLETED') return payload(invocation.response, { charts: true });
  if (invocation.status === 'ERROR') return html`<p class="problem">${invocation.error ?? 'The invocation failed.'}</p>`;
  if (invocation.status === 'CANCELLED') return html`<p class="muted">Cancelled before a result.</p>`;
  return html`<p class="muted">No result yet (${invocation.status.toLowerCase().replace('_', ' ')}).</p>`;
}

function statusBadge(status: string): Html {
  const tone = status === 'COMPLETED' ? 'ok' : status === 'ERROR' || status === 'CANCELLED' ? 'off' : 'info';
  return badge(status.toLowerCase().replace('_', ' '), tone);
}
