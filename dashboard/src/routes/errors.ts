import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { AppError } from '../../../kernel/errors/errors.js';
import { at, type Dashboard, type Visit } from '../context.js';
import { sendPage } from '../render.js';
import { html } from '../web/html.js';

const TITLES: Record<number, string> = {
  400: 'That did not work',
  401: 'Please sign in',
  403: 'Not allowed',
  404: 'Page not found',
  409: 'Conflict',
  410: 'No longer available',
  413: 'Too large',
  415: 'Unsupported file type',
  429: 'Too many attempts',
  502: 'A backend failed',
  503: 'Temporarily unavailable',
};

export function pageNotFound(dash: Dashboard): RequestHandler {
  return (req, res) => sendProblem(dash, req, res, 404, 'There is no such page in the dashboard.');
}

/** Errors become pages: the service's message for what the user can act on, a generic one (and a log line) otherwise. */
export function errorPages(dash: Dashboard): ErrorRequestHandler {
  return async (error, req, res, next) => {
    if (res.headersSent) return next(error);
    const { status, message } = describe(error);
    if (status >= 500 && !(error instanceof AppError)) dash.platform.logger.error({ err: error, reqId: req.id, url: req.logUrl }, 'dashboard request failed');
    for (const [name, value] of Object.entries(error instanceof AppError ? error.headers : {})) {
      if (name !== 'WWW-Authenticate') res.setHeader(name, value);
    }
    await sendProblem(dash, req, res, status, message);
  };
}

function describe(error: unknown): { status: number; message: string } {
  if (error instanceof AppError) return { status: error.status, message: error.message };
  const e = error as { type?: string; status?: number };
  if (e.type === 'entity.too.large') return { status: 413, message: 'The form is too large.' };
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) return { status: e.status, message: 'The request could not be read.' };
  return { status: 500, message: 'Something went wrong on our side. Try again in a moment.' };
}

async function sendProblem(dash: Dashboard, req: Request, res: Response, status: number, message: string) {
  // An error before the visit was established (the database is down, say) still gets a page.
  res.locals.visit ??= { principal: undefined, sessionId: undefined, sessionEnded: false, binding: '', csrfToken: '' } satisfies Visit;
  const body = html`<div class="card stack"><p class="lead">${message}</p><p><a href="${at()}">Back to the dashboard</a></p></div>`;
  try {
    await sendPage(dash, req, res, { title: TITLES[status] ?? 'Error', body, status });
  } catch {
    res.status(status).type('text').send(message);
  }
}
