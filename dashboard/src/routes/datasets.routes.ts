import { pipeline } from 'node:stream/promises';
import type { Request, Response, Router } from 'express';
import type { Principal } from '../../../features/auth/principal.js';
import type { ExportTarget } from '../../../features/datasets/service.js';
import { contentDisposition } from '../../../infra/storage/file-names.js';
import { InputError } from '../../../kernel/errors/errors.js';
import { principalOf, seeOther, supervises, visitOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { DATASET_FORMATS, datasetsBody, type ExportDraft } from '../pages/datasets.js';
import { datasetsLink, parseModelKey } from '../pages/links.js';
import { isUuid, trimmed, uuidParam } from '../web/forms.js';
import { modelChoices, olderOf, pageAt } from './listing.js';
import { attempt } from './outcome.js';

const DATASETS_PER_PAGE = 20;
/** The API's DatasetName and StorageKey (api/public/openapi.yaml): the dashboard accepts what the API does. */
export const DATASET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const STORAGE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** The caller's datasets: export a closed session, list the versions, download their files. */
export function mountDatasetRoutes(router: Router, dash: Dashboard): void {
  const datasets = dash.platform.services.datasets;

  router.get('/datasets', async (req, res) => {
    const text = (name: string) => (typeof req.query[name] === 'string' ? (req.query[name] as string).slice(0, 200) : '');
    const draft: ExportDraft = { model: text('model'), session: text('session'), storage_key: '', name: '', format: DATASET_FORMATS[0]!.value };
    await renderDatasets(dash, req, res, draft);
  });

  router.post('/datasets', async (req, res) => {
    const draft: ExportDraft = { model: trimmed(req, 'model'), session: trimmed(req, 'session'), storage_key: trimmed(req, 'storage_key'), name: trimmed(req, 'name'), format: trimmed(req, 'format') };
    const outcome = await attempt(() => exportSession(dash, principalOf(res), draft));
    if (outcome.mistake) return renderDatasets(dash, req, res, draft, { error: outcome.mistake.message, status: outcome.mistake.status });
    seeOther(res, datasetsLink({ model: draft.model }), 'dataset-exported');
  });

  router.get('/datasets/:id/:part', async (req, res) => {
    const part = req.params.part;
    if (part !== 'records' && part !== 'table' && part !== 'manifest') throw new InputError('Download the records, the table or the manifest.');
    const file = await datasets.open(principalOf(res), uuidParam(req), part);
    res.setHeader('Content-Type', file.contentType);
    res.setHeader('Content-Length', String(file.size));
    res.setHeader('Content-Disposition', contentDisposition(file.fileName));
    await pipeline(file.stream, res);
  });
}

/** The form's export, checked as the API checks its body, then written by the same service. */
async function exportSession(dash: Dashboard, principal: Principal, draft: ExportDraft) {
  const model = parseModelKey(draft.model);
  if (!model) throw new InputError('Model: choose a model of the list.');
  if (!isUuid(draft.session)) throw new InputError('Session: the id of one of your sessions, such as 0b5c…-…; Export on the Sessions page fills it in.');
  if (!STORAGE_KEY.test(draft.storage_key)) throw new InputError('Storage: the key of a storage configuration of the workspace.');
  if (draft.name && !DATASET_NAME.test(draft.name)) throw new InputError('Name: letters, digits, ".", "_" and "-", starting with a letter or digit, at most 100.');
  const format = DATASET_FORMATS.find((f) => f.value === draft.format);
  if (!format) throw new InputError(`Format: one of ${DATASET_FORMATS.map((f) => f.label).join(', ')}.`);
  const target: ExportTarget = { storage_key: draft.storage_key, ...(draft.name && { name: draft.name }), ...format.target };
  return dash.platform.services.datasets.exportSession(principal, model.code, model.version, draft.session.toLowerCase(), target);
}

async function renderDatasets(dash: Dashboard, req: Request, res: Response, draft: ExportDraft, problem: { error?: string; status?: number } = {}) {
  const principal = principalOf(res);
  const page = pageAt(req, DATASETS_PER_PAGE);
  const [models, found, storageKeys] = await Promise.all([
    modelChoices(dash, principal),
    dash.platform.services.datasets.list(principal, page),
    // Only supervisors may list storage (as on the private API); members type the key.
    supervises(principal) ? dash.platform.services.storage.list(principal, { limit: 1000, offset: 0 }).then(({ items }) => items.map((s) => s.storage_key)) : undefined,
  ]);
  const body = datasetsBody({ csrfToken: visitOf(res).csrfToken, models, storageKeys, draft, datasets: found.items, total: found.total, older: olderOf(found), paged: Boolean(page.after) });
  await sendPage(dash, req, res, { title: 'Datasets', body, current: '/datasets', ...problem });
}
