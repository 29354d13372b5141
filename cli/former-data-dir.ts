import fs from 'node:fs';
import path from 'node:path';

/** The data folder's name before the product was renamed to didyma. */
export const FORMER_DATA_DIR = '.modelplane';

/**
 * Says how to move a data folder left under the product's former name when the
 * configured folder does not exist yet, so `didyma dev` never starts empty beside it.
 */
export function formerDataDirNotice(dataDir: string, cwd = process.cwd()): string | undefined {
  const former = path.resolve(cwd, FORMER_DATA_DIR);
  const current = path.resolve(cwd, dataDir);
  if (current === former || fs.existsSync(current) || !fs.existsSync(former)) return undefined;
  const relative = path.relative(cwd, current) || '.';
  return [
    `Found ${FORMER_DATA_DIR}/, the data folder of this product under its former name, and no ${relative}/.`,
    `Move it and start again:  mv ${FORMER_DATA_DIR} ${relative}`,
    `or keep it where it is:   DIDYMA_DATA_DIR=${FORMER_DATA_DIR} didyma dev`,
  ].join('\n');
}
