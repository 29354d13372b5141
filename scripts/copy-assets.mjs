// Copies the non-TypeScript files the compiled code reads (OpenAPI documents,
// CRDs' schemas, dashboard assets) next to their modules in dist/, and writes
// each OpenAPI document as JSON beside its YAML, which the servers read instead
// (infra/http/openapi.ts: far less memory than parsing the YAML).
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

const roots = ['api', 'kernel', 'features', 'infra', 'platform', 'executor', 'operator', 'demo', 'dashboard'];
const keep = /\.(ya?ml|json|html|css|js|svg|png|ico|txt)$/;

function copy(dir) {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const from = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') copy(from);
    } else if (keep.test(entry.name) && !entry.name.endsWith('.test.js')) {
      const to = path.join('dist', from);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(from, to);
      if (entry.name === 'openapi.yaml') fs.writeFileSync(to.replace(/\.yaml$/, '.json'), JSON.stringify(parse(fs.readFileSync(from, 'utf8'))));
    }
  }
}

for (const root of roots) copy(root);
