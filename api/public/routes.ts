import type { Request } from 'express';
import { operationRoutes, type OperationRoutes } from '../../infra/http/operations/routes.js';
import type { Platform } from '../../platform/platform.js';
import { authenticate, principalOf } from '../shared/authenticate.js';
import { pageOf, queryText, sendPage } from '../../infra/http/pagination.js';
import type { InvocationStatus, InvocationType, SessionRow } from '../../features/invocations/store.js';
import { mountFileRoutes, sendFile } from '../shared/file-routes.js';
import { sendEventStream } from '../../infra/http/event-stream.js';
import { releaseInFlightSlot } from '../../infra/http/limits.js';
import { idempotencyKeys } from '../shared/idempotency.js';
import { createInvocation } from './prefer-wait.js';
import { InputError } from '../../kernel/errors/errors.js';

/** A comment line this often keeps proxies from closing a quiet event stream. */
const EVENT_HEARTBEAT_MS = 15_000;

const model = (req: Request) => [String(req.params.modelCode), String(req.params.modelVersion)] as const;
const session = (req: Request) => [...model(req), String(req.params.sessionId)] as const;

/** Routes of the public server: models, sessions, invocations, feedback, datasets, member uploads. */
export function publicRoutes(platform: Platform): OperationRoutes {
  const { catalog, invocations, uploads, datasets } = platform.services;
  const member = authenticate(platform.authenticator)('workspace');
  // The POSTs that create work take an Idempotency-Key (scoped by operation id).
  const idempotent = idempotencyKeys(platform.services.idempotency, platform.logger);
  const router = operationRoutes();
  const base = '/api/model/:modelCode/version/:modelVersion';
  const invocationsPath = `${base}/session/:sessionId/invocation`;

  // The hot paths first: express tries the routes in order.
  router.post(invocationsPath, member, idempotent('createInvocation'), (req, res) => createInvocation(platform, req, res, session(req)));
  router.get(`${invocationsPath}/:invocationId`, member, async (req, res) => {
    res.json(await invocations.get(principalOf(res), ...session(req), String(req.params.invocationId)));
  });


  router.get('/api/model', member, async (req, res) => {
    sendPage(req, res, await catalog.list(principalOf(res), pageOf(req), { modelCode: queryText(req, 'model_code') }));
  });
  router.get(base, member, async (req, res) => {
    res.json(await catalog.get(principalOf(res), ...model(req)));
  });
  router.get('/api/platform_model/:modelCode/version/:modelVersion/model_card', member, async (req, res) => {
    const file = await catalog.modelCard(principalOf(res), ...model(req));
    await sendFile(res, await uploads.openFile(file));
  });

  router.get(`${base}/session`, member, async (req, res) => {
    const filter = { state: queryText(req, 'state') as SessionRow['state'] | undefined };
    sendPage(req, res, await invocations.listSessions(principalOf(res), ...model(req), pageOf(req), filter));
  });
  router.post(`${base}/session`, member, idempotent('createSession'), async (req, res) => {
    res.status(201).json(await invocations.createSession(principalOf(res), ...model(req)));
  });
  router.post('/api/model/:modelCode/alias/:alias/session', member, idempotent('createAliasSession'), async (req, res) => {
    res.status(201).json(await invocations.createSessionOnAlias(principalOf(res), String(req.params.modelCode), String(req.params.alias)));
  });
  router.patch(`${base}/session/:sessionId`, member, async (req, res) => {
    res.json(await invocations.setSessionState(principalOf(res), ...session(req), requestedState(req)));
  });

  router.get(invocationsPath, member, async (req, res) => {
    const filter = {
      status: queryText(req, 'status') as InvocationStatus | undefined,
      type: queryText(req, 'type') as InvocationType | undefined,
      relatedTo: queryText(req, 'related_to')?.toLowerCase().split(','),
    };
    sendPage(req, res, await invocations.list(principalOf(res), ...session(req), pageOf(req), filter));
  });
  router.get(`${invocationsPath}/:invocationId/check_progress`, member, async (req, res) => {
    const { status } = await invocations.get(principalOf(res), ...session(req), String(req.params.invocationId));
    res.json({ status });
  });
  router.get(`${base}/session/:sessionId/events`, member, async (req, res) => {
    const { slots, readers } = platform.eventStreams;
    const release = slots.take(principalOf(res));
    try {
      const { sessionId, from } = await invocations.events(principalOf(res), ...session(req), req.get('last-event-id') ?? queryText(req, 'last_event_id'));
      // Admitted like any request; from here on it holds a stream slot, not a request slot.
      releaseInFlightSlot(res);
      await sendEventStream(req, res, {
        event: 'invocation',
        data: (event) => event,
        follow: (follower) => readers.follow(sessionId, from, follower),
        stopping: () => platform.shutdown.draining,
        heartbeatMs: EVENT_HEARTBEAT_MS,
        logger: platform.logger,
      });
    } finally {
      release();
    }
  });
  router.post(`${invocationsPath}/:invocationId/cancel`, member, async (req, res) => {
    res.json(await invocations.cancel(principalOf(res), ...session(req), String(req.params.invocationId)));
  });
  router.post(`${invocationsPath}/:invocationId/retry`, member, async (req, res) => {
    res.json(await invocations.retry(principalOf(res), ...session(req), String(req.params.invocationId)));
  });
  router.post(`${base}/session/:sessionId/cancel`, member, async (req, res) => {
    res.json(await invocations.cancelSession(principalOf(res), ...session(req), queryText(req, 'status') as 'QUEUED' | 'IN_PROGRESS' | undefined));
  });
  router.post(`${invocationsPath}/:invocationId/feedback`, member, idempotent('createFeedback'), async (req, res) => {
    res.status(201).json(await invocations.feedback(principalOf(res), ...session(req), String(req.params.invocationId), req.body.request.body));
  });

  router.post(`${base}/session/:sessionId/dataset`, member, idempotent('exportSessionDataset'), async (req, res) => {
    res.status(201).json(await datasets.exportSession(principalOf(res), ...session(req), req.body));
  });
  router.post('/api/dataset', member, idempotent('exportDataset'), async (req, res) => {
    const { name, storage_key, format, ...filter } = req.body;
    res.status(201).json(await datasets.exportFiltered(principalOf(res), { name, storage_key, format }, filter));
  });
  router.get('/api/dataset', member, async (req, res) => {
    sendPage(req, res, await datasets.list(principalOf(res), pageOf(req), queryText(req, 'name')));
  });
  router.get('/api/dataset/:datasetId', member, async (req, res) => {
    res.json(await datasets.get(principalOf(res), String(req.params.datasetId)));
  });
  router.get('/api/dataset/:datasetId/records', member, async (req, res) => {
    await sendFile(res, await datasets.open(principalOf(res), String(req.params.datasetId), 'records'));
  });
  router.get('/api/dataset/:datasetId/table', member, async (req, res) => {
    await sendFile(res, await datasets.open(principalOf(res), String(req.params.datasetId), 'table'));
  });
  router.get('/api/dataset/:datasetId/manifest', member, async (req, res) => {
    await sendFile(res, await datasets.open(principalOf(res), String(req.params.datasetId), 'manifest'));
  });

  mountFileRoutes(router, uploads, member);
  return router;
}

type SessionState = 'OPEN' | 'CLOSED';

/** The state a session PATCH asks for: in the query (the first design's place) or the body; one of them, and the same in both. */
function requestedState(req: Request): SessionState {
  const inQuery = req.query.state as SessionState | undefined;
  const inBody = (req.body as { state?: SessionState } | undefined)?.state;
  if (inQuery && inBody && inQuery !== inBody) throw new InputError(`state: the query says ${inQuery} and the body ${inBody}; give one.`);
  const state = inQuery ?? inBody;
  if (!state) throw new InputError('state: required, as the query parameter (?state=CLOSED) or in the body ({"state": "CLOSED"}).');
  return state;
}
