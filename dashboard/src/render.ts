import type { Request, Response } from 'express';
import { visitOf, type Dashboard } from './context.js';
import { layout } from './pages/layout.js';
import { noticeText } from './pages/notices.js';
import { toDocument, type Html } from './web/html.js';

export interface PageOptions {
  title: string;
  body: Html;
  status?: number;
  /** Section path for the navigation (e.g. '/tokens'). */
  current?: string;
  error?: string;
  notice?: string;
}

/** Renders a page inside the layout, with the notice named in the query string, if any. */
export async function sendPage(dash: Dashboard, req: Request, res: Response, page: PageOptions): Promise<void> {
  const visit = visitOf(res);
  const workspaces = visit.principal ? await dash.platform.identity.workspaces.memberships(visit.principal, { limit: 200, offset: 0 }) : [];
  const document = layout({
    ...page,
    notice: page.notice ?? noticeText(req.query.notice),
    csrfToken: visit.csrfToken,
    principal: visit.principal,
    workspaces,
    apiPages: dash.apiPages,
  });
  res.status(page.status ?? 200).type('html').send(toDocument(document));
}
