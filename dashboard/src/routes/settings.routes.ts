import type { Request, Response, Router } from 'express';
import { InputError, NotFoundError } from '../../../kernel/errors/errors.js';
import { at, principalOf, seeOther, visitOf, workspaceOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { settingsBody } from '../pages/settings.js';
import { uploadedFile } from '../web/forms.js';
import { attempt } from './outcome.js';

/** Workspace settings: the logo. */
export function mountSettingsRoutes(router: Router, dash: Dashboard): void {
  const workspaces = dash.platform.identity.workspaces;

  router.get('/settings', (req, res) => renderSettings(dash, req, res));

  router.get('/settings/logo', async (_req, res) => {
    const logo = await workspaces.logo(principalOf(res), workspaceOf(res).id);
    // Only the image types the service accepts (and checked by content) are stored.
    res.type(logo.content_type).setHeader('Content-Disposition', 'inline');
    res.send(logo.data);
  });

  router.post('/settings/logo', async (req, res) => {
    const outcome = await attempt(async () => {
      const file = uploadedFile(res);
      if (!file) throw new InputError('Choose an image file to upload.');
      await workspaces.saveLogo(principalOf(res), workspaceOf(res).id, file.contentType, file.data);
    });
    if (outcome.mistake) return renderSettings(dash, req, res, { error: outcome.mistake.message, status: outcome.mistake.status });
    seeOther(res, at('/settings'), 'logo-saved');
  });
}

async function renderSettings(dash: Dashboard, req: Request, res: Response, problem: { error?: string; status?: number } = {}) {
  const hasLogo = await dash.platform.identity.workspaces.logo(principalOf(res), workspaceOf(res).id).then(
    () => true,
    (error: unknown) => {
      if (error instanceof NotFoundError) return false;
      throw error;
    },
  );
  const body = settingsBody({ csrfToken: visitOf(res).csrfToken, workspace: workspaceOf(res).name, hasLogo, maxBytes: dash.platform.config.maxLogoBytes });
  await sendPage(dash, req, res, { title: 'Workspace settings', body, current: '/settings', ...problem });
}
