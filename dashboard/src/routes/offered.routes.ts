import { Readable } from 'node:stream';
import type { Request, Response, Router } from 'express';
import { at, principalOf, seeOther, visitOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { offeredBody, registerOfferBody, type RegisterOfferPage } from '../pages/offered-models.js';
import { trimmed, uploadedFile, type UploadedFile } from '../web/forms.js';
import { attempt } from './outcome.js';
import { InputError, NotFoundError } from '../../../kernel/errors/errors.js';
import type { OfferedModel } from '../../../features/models/offers.service.js';
import type { Principal } from '../../../features/auth/principal.js';

const ALL = { limit: 1000, offset: 0 };

/** Supervisors: what a deployment's registry offers (KServe's InferenceServices…), and registering it with its model card. */
export function mountOfferedRoutes(router: Router, dash: Dashboard): void {
  const { offers, storage, uploads, models } = dash.platform.services;
  const keyOf = (req: Request) => String(req.params.key);

  router.get('/deployments/:key/offered', async (req, res) => {
    const body = offeredBody({ deploymentKey: keyOf(req), offers: await offers.list(principalOf(res), keyOf(req)) });
    await sendPage(dash, req, res, { title: `Offered by ${keyOf(req)}`, body, current: '/deployments' });
  });

  router.get('/deployments/:key/offered/:code', async (req, res) => renderRegister(req, res, await pageOf(req, res)));

  router.post('/deployments/:key/offered/:code', async (req, res) => {
    const page = await pageOf(req, res);
    const draft = { version: trimmed(req, 'version'), name: trimmed(req, 'name'), description: trimmed(req, 'description') };
    const outcome = await attempt(async () => {
      const card = await storeCard(principalOf(res), trimmed(req, 'storage_key'), uploadedFile(res));
      const version = page.offer.version ?? draft.version;
      await models.register(principalOf(res), { model_code: page.offer.model_code, version, name: draft.name, description: draft.description, model_card_file_id: card });
    });
    if (outcome.mistake) return renderRegister(req, res, { ...page, draft }, { error: outcome.mistake.message, status: outcome.mistake.status });
    seeOther(res, at('/models'), 'model-registered');
  });

  async function pageOf(req: Request, res: Response): Promise<RegisterOfferPage> {
    const principal = principalOf(res);
    const code = String(req.params.code);
    const offer = (await offers.list(principal, keyOf(req))).find((o: OfferedModel) => o.model_code === code);
    if (!offer) throw new NotFoundError(`Deployment "${keyOf(req)}" offers no model "${code}".`);
    const storageKeys = (await storage.list(principal, ALL)).items.map((s: { storage_key: string }) => s.storage_key);
    return { csrfToken: visitOf(res).csrfToken, deploymentKey: keyOf(req), offer, storageKeys };
  }

  function renderRegister(req: Request, res: Response, page: RegisterOfferPage, problem: { error?: string; status?: number } = {}) {
    return sendPage(dash, req, res, { title: `Register ${page.offer.model_code}`, body: registerOfferBody(page), current: '/deployments', ...problem });
  }

  /** Uploads the model card through the same two steps as the API (`request_upload`, then the file): its file id. */
  async function storeCard(principal: Principal, storageKey: string, file: UploadedFile | undefined): Promise<string> {
    if (!file) throw new InputError('Choose the model card, a Markdown file.');
    const { upload_id: uploadId } = await uploads.requestUpload(principal, storageKey, { file_name: file.fileName, content_type: 'text/markdown', size: file.data.length });
    const stored = await uploads.proxyUpload(principal, storageKey, uploadId, async (_maxBytes, sink) => ({ result: await sink(Readable.from([file.data]), { fileName: file.fileName, contentType: 'text/markdown' }) }));
    return stored.file_id;
  }
}
