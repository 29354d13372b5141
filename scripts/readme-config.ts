// Rewrites the configuration table of README.md from core/config/variables.ts.
import fs from 'node:fs';
import { configTable } from '../core/config/config.js';

const file = new URL('../README.md', import.meta.url);
const readme = fs.readFileSync(file, 'utf8');
const updated = readme.replace(/<!-- config-table:start -->[\s\S]*<!-- config-table:end -->/, `<!-- config-table:start -->\n${configTable()}\n<!-- config-table:end -->`);
fs.writeFileSync(file, updated);
