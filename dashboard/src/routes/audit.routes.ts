import type { Request, Router } from 'express';
import { decodeCursor, encodeCursor } from '../../../infra/http/pagination.js';
import { InputError } from '../../../kernel/errors/errors.js';
import { isStaffUser, principalOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { auditBody, type AuditFilters } from '../pages/audit.js';

const PAGE_SIZE = 50;
const FILTERS = ['action', 'actor', 'resource_type', 'resource_id'] as const;

/** The audit trail, as the API lists it: supervisors their workspace's records, staff every one. */
export function mountAuditRoutes(router: Router, dash: Dashboard): void {
  router.get('/audit', async (req, res) => {
    const principal = principalOf(res);
    const filters = filtersOf(req);
    const after = typeof req.query.after === 'string' ? decodeCursor(req.query.after) : undefined;
    const found = await dash.platform.audit.list(
      principal,
      { action: filters.action, actorUserId: filters.actor === undefined ? undefined : actorId(filters.actor), resourceType: filters.resource_type, resourceId: filters.resource_id },
      { limit: PAGE_SIZE, offset: 0, ...(after && { after }) },
    );
    const older = found.next && new URLSearchParams({ ...filters, after: encodeCursor(found.next) }).toString();
    await sendPage(dash, req, res, { title: 'Audit trail', body: auditBody({ records: found.items, total: found.total, filters, showWorkspace: isStaffUser(principal), ...(older && { older }) }), current: '/audit' });
  });
}

/** The filters the form sent, blanks left out. */
function filtersOf(req: Request): AuditFilters {
  const filters: AuditFilters = {};
  for (const name of FILTERS) {
    const value = req.query[name];
    if (typeof value === 'string' && value.trim() !== '') filters[name] = value.trim().slice(0, 200);
  }
  return filters;
}

function actorId(text: string): number {
  if (!/^\d{1,10}$/.test(text) || Number(text) > 2147483647) throw new InputError('User id: a number.', [{ field: 'actor', message: 'is not a user id' }]);
  return Number(text);
}
