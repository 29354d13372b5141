import type { Router } from 'express';
import { principalOf, workspaceOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { aliasComparisonBody, type AliasComparisonPage } from '../pages/alias-comparison.js';
import { modelChoices } from './listing.js';
import { parseModelKey } from '../pages/links.js';

const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

/** Members: the versions behind an alias compared on outcomes, feedback and shadows' agreement, as the private API's comparison answers. */
export function mountAliasRoutes(router: Router, dash: Dashboard): void {
  const { aliasComparison } = dash.platform.services;

  router.get('/aliases', async (req, res) => {
    workspaceOf(res);
    const principal = principalOf(res);
    const codes = [...new Set((await modelChoices(dash, principal)).map((choice) => parseModelKey(choice.value)!.code))].map((c) => ({ value: c, label: c }));
    const query = { model: text(req.query.model) || (codes[0]?.value ?? ''), alias: text(req.query.alias), since: text(req.query.since), until: text(req.query.until), tolerance: text(req.query.tolerance) };
    const window = { since: query.since || undefined, until: query.until || undefined, tolerance: query.tolerance || undefined };
    const comparison = query.alias ? await aliasComparison.compare(principal, query.model, query.alias, window) : undefined;
    const body = aliasComparisonBody({ codes, query, comparison } satisfies AliasComparisonPage);
    await sendPage(dash, req, res, { title: 'Alias comparison', body, current: '/aliases' });
  });
}
