// Rewrites the configuration table of docs/configuration.md from
// kernel/config/variables.ts, the one catalogue of variables (`npm run docs:config`).
import fs from 'node:fs';
import { configTable } from '../kernel/config/config.js';

const file = new URL('../docs/configuration.md', import.meta.url);
const page = fs.readFileSync(file, 'utf8');
const markers = /<!-- config-table:start -->[\s\S]*<!-- config-table:end -->/;
if (!markers.test(page)) throw new Error('docs/configuration.md has lost its config-table markers.');
fs.writeFileSync(file, page.replace(markers, () => `<!-- config-table:start -->\n${configTable()}\n<!-- config-table:end -->`));
