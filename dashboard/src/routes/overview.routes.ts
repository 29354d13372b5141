import type { Router } from 'express';
import { principalOf, type Dashboard } from '../context.js';
import { sendPage } from '../render.js';
import { deploymentsBody, modelsBody, storageBody } from '../pages/overviews.js';

const ALL = { limit: 1000, offset: 0 };

/** Read-only overviews of models, deployments and storage, from the services the API uses. */
export function mountOverviewRoutes(router: Router, dash: Dashboard): void {
  const { catalog, deployments, storage } = dash.platform.services;

  router.get('/models', async (req, res) => {
    const { items } = await catalog.list(principalOf(res), ALL);
    await sendPage(dash, req, res, { title: 'Models', body: modelsBody(items), current: '/models' });
  });

  router.get('/deployments', async (req, res) => {
    const { items } = await deployments.list(principalOf(res), ALL);
    await sendPage(dash, req, res, { title: 'Deployments', body: deploymentsBody(items), current: '/deployments' });
  });

  router.get('/storage', async (req, res) => {
    const { items } = await storage.list(principalOf(res), ALL);
    await sendPage(dash, req, res, { title: 'Storage', body: storageBody(items), current: '/storage' });
  });
}
