import fs from 'node:fs';
import { parse } from 'yaml';

export type OpenApiDocument = { paths: Record<string, unknown> } & Record<string, unknown>;

/** Reads an OpenAPI YAML document shipped beside the code (copied to dist/ by the build). */
export function loadOpenApi(url: URL): OpenApiDocument {
  return parse(fs.readFileSync(url, 'utf8')) as OpenApiDocument;
}

/** A copy of the document without the given paths (for routes that are not mounted). */
export function withoutPaths(doc: OpenApiDocument, drop: (path: string) => boolean): OpenApiDocument {
  const paths = Object.fromEntries(Object.entries(doc.paths).filter(([path]) => !drop(path)));
  return { ...structuredClone(doc), paths };
}
