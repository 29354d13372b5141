import { pipeline } from 'node:stream/promises';
import type { Request, RequestHandler, Response } from 'express';
import type { OperationRoutes } from '../../infra/http/operations/routes.js';
import { principalOf } from './authenticate.js';
import { receiveFile } from '../../infra/http/multipart.js';
import { contentDisposition } from '../../infra/storage/file-names.js';
import type { UploadsService, FileStream } from '../../features/files/uploads.service.js';

/**
 * The upload flow and downloads, mounted on the private server (supervisors)
 * and the public server (members) with the guard each one needs.
 */
export function mountFileRoutes(router: OperationRoutes, uploads: UploadsService, guard: RequestHandler): void {
  const key = (req: Request) => String(req.params.storage_key);

  router.post('/api/storage/:storage_key/files/request_upload', guard, async (req, res) => {
    const ticket = await uploads.requestUpload(principalOf(res), key(req), req.body);
    const path = `/api/storage/${encodeURIComponent(key(req))}/files/proxy_upload/${ticket.upload_id}`;
    res.status(201).json({ ...ticket, upload_url: `${req.protocol}://${req.get('host')}${path}` });
  });

  router.post('/api/storage/:storage_key/files/proxy_upload/:upload_id', guard, async (req, res) => {
    const stored = await uploads.proxyUpload(principalOf(res), key(req), String(req.params.upload_id), (maxBytes, sink) =>
      receiveFile(req, 'file', maxBytes, sink),
    );
    res.status(201).json(stored);
  });

  router.get('/api/storage/:storage_key/files/:file_id', guard, async (req, res) => {
    await sendFile(res, await uploads.open(principalOf(res), key(req), String(req.params.file_id)));
  });
}

/** Streams a stored file with its media type and a safe Content-Disposition. */
export async function sendFile(res: Response, file: FileStream & { size: number }): Promise<void> {
  res.setHeader('Content-Type', file.contentType);
  res.setHeader('Content-Length', String(file.size));
  res.setHeader('Content-Disposition', contentDisposition(file.fileName));
  await pipeline(file.stream, res);
}
