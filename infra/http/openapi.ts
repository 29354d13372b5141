import fs from 'node:fs';
import { parse } from 'yaml';

export type OpenApiDocument = { paths: Record<string, unknown> } & Record<string, unknown>;

/** Reads an OpenAPI YAML document shipped beside the code (copied to dist/ by the build). */
export function loadOpenApi(url: URL): OpenApiDocument {
  // The build writes each document as JSON beside its YAML (scripts/copy-assets.mjs): parsing the YAML left
  // every process about 30 MiB larger for good, reading the JSON about 1 MiB. From sources, the YAML is read.
  const json = new URL(url.href.replace(/\.ya?ml$/, '.json'));
  if (json.href !== url.href && fs.existsSync(json)) return JSON.parse(fs.readFileSync(json, 'utf8')) as OpenApiDocument;
  return parse(fs.readFileSync(url, 'utf8')) as OpenApiDocument;
}

/** A copy of the document without the given paths (for routes that are not mounted). */
export function withoutPaths(doc: OpenApiDocument, drop: (path: string) => boolean): OpenApiDocument {
  const paths = Object.fromEntries(Object.entries(doc.paths).filter(([path]) => !drop(path)));
  return { ...structuredClone(doc), paths };
}
