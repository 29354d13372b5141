import type { Request } from 'express';
import { decodeCursor, encodeCursor, type Page } from '../../../infra/http/pagination.js';
import type { Cursor } from '../../../infra/db/keyset.js';
import type { Principal } from '../../../features/auth/principal.js';
import type { Dashboard } from '../context.js';
import type { Choice } from '../pages/components.js';
import { modelKey } from '../pages/links.js';

/** The page a list shows: `size` rows after the cursor of `?after=`, as the API pages. */
export function pageAt(req: Request, size: number): Page {
  const after = typeof req.query.after === 'string' ? decodeCursor(req.query.after) : undefined;
  return { limit: size, offset: 0, ...(after && { after }) };
}

/** The cursor of the next page as a query value, when there is one. */
export const olderOf = (found: { next?: Cursor }) => (found.next ? encodeCursor(found.next) : undefined);

/** The workspace's live models, as the form choices of the sessions and datasets pages. */
export async function modelChoices(dash: Dashboard, principal: Principal): Promise<Choice[]> {
  const { items } = await dash.platform.services.catalog.list(principal, { limit: 1000, offset: 0 });
  return items.map(({ model_metadata: m, is_explainer }) => ({
    value: modelKey({ code: m.model_code, version: m.version }),
    label: `${m.name} (${m.model_code} ${m.version})${is_explainer ? ', explainer' : ''}`,
  }));
}
