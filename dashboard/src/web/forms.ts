import express, { type Request, type RequestHandler, type Response } from 'express';
import busboy from 'busboy';
import type { Role } from '../../../features/auth/principal.js';
import { InputError, NotFoundError, PayloadTooLargeError } from '../../../kernel/errors/errors.js';

export interface UploadedFile {
  fileName: string;
  contentType: string;
  data: Buffer;
}

export interface FormLimits {
  maxBodyBytes: number;
  maxFileBytes: number;
}

/**
 * Parses the bodies of the dashboard's forms into `req.body`: url-encoded,
 * or multipart (fields, and at most one small file kept in `res.locals.upload`)
 * so the CSRF token of an upload form is checked like any other.
 */
export function formBodies(limits: FormLimits): RequestHandler {
  const urlencoded = express.urlencoded({ extended: false, limit: limits.maxBodyBytes, parameterLimit: 50 });
  return (req, res, next) => {
    if (req.method !== 'POST') return next();
    if (!req.is('multipart/form-data')) return urlencoded(req, res, next);
    readMultipart(req, limits.maxFileBytes).then(({ fields, file }) => {
      req.body = fields;
      res.locals.upload = file;
      next();
    }, next);
  };
}

/** A text field of the submitted form ('' when absent or repeated). */
export function field(req: Request, name: string): string {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

export const trimmed = (req: Request, name: string) => field(req, name).trim();

export const checked = (req: Request, name: string) => field(req, name) === 'on';

export function uploadedFile(res: Response): UploadedFile | undefined {
  return res.locals.upload as UploadedFile | undefined;
}

function readMultipart(req: Request, maxFileBytes: number): Promise<{ fields: Record<string, string>; file?: UploadedFile }> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // One byte over the limit is how busboy says "too large".
      parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: maxFileBytes + 1, fields: 20, fieldSize: 16 * 1024, parts: 22 } });
    } catch {
      return reject(new InputError('Malformed form body.'));
    }
    const fields: Record<string, string> = {};
    let file: UploadedFile | undefined;
    let failure: Error | undefined;
    parser.on('field', (name, value) => {
      fields[name] = value;
    });
    parser.on('file', (_name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => {
        failure = new PayloadTooLargeError(`The file is larger than ${maxFileBytes} bytes.`);
      });
      stream.on('end', () => {
        const data = Buffer.concat(chunks);
        // A file input left empty still sends a part: no name, no bytes.
        if (info.filename || data.length) file = { fileName: info.filename ?? '', contentType: (info.mimeType || 'application/octet-stream').toLowerCase(), data };
      });
    });
    parser.on('error', () => reject(new InputError('Malformed form body.')));
    parser.on('close', () => (failure ? reject(failure) : resolve({ fields, file })));
    req.pipe(parser);
  });
}

/** A numeric id from the path; anything else names nothing (404). */
export function idParam(req: Request, name = 'id'): number {
  const raw = req.params[name];
  if (typeof raw !== 'string' || !/^\d{1,9}$/.test(raw)) throw new NotFoundError('Not found.');
  return Number(raw);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string) => UUID.test(value);

/** A uuid from the path (sessions, datasets); anything else names nothing (404). */
export function uuidParam(req: Request, name = 'id'): string {
  const raw = req.params[name];
  if (typeof raw !== 'string' || !isUuid(raw)) throw new NotFoundError('Not found.');
  return raw.toLowerCase();
}

/** A role chosen in a form. */
export function roleOf(value: string): Role {
  if (value !== 'user' && value !== 'supervisor') throw new InputError('role: user or supervisor.');
  return value;
}
