#!/usr/bin/env node
// Builds the image of KServe's model server for the test cluster's pods,
// without Docker or a registry, from what scripts/services/kserve.sh set up
// on this machine: its virtualenv (the `kserve` package and scikit-learn) at
// the same path, the Python 3.11 it was made with and its standard library,
// the shared libraries `ldd` lists for every native module, and
// kserve/iris_model_server.py as the entry point. Flags after the image's
// command go to the server (`--model_name`, `--revision`, `--http_port`…).
//   node scripts/image/kserve-image.mjs --venv VENV --server FILE [--import CONTAINERD_SOCKET]
// prints the image's reference.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildOne, copyWithLibraries, writeFile } from './dependency-images.mjs';

const SERVER_PATH = '/opt/kserve/iris_model_server.py';
// Not needed to serve a model: the interpreter's own packages (the venv has its), tests, tools and GUIs.
const STDLIB_SKIPPED = new Set(['site-packages', 'test', 'idlelib', 'tkinter', 'turtledemo', 'ensurepip', 'lib2to3', 'config-3.11-x86_64-linux-gnu']);
const UID = 1000;

/** The interpreter the venv was made with (pyvenv.cfg's `home`), and its standard library. */
function interpreterOf(venv) {
  const home = /^home\s*=\s*(.+)$/m.exec(fs.readFileSync(path.join(venv, 'pyvenv.cfg'), 'utf8'))?.[1]?.trim();
  const python = home && path.join(home, 'python3.11');
  if (!python || !fs.existsSync(python)) throw new Error(`no python3.11 at the home of ${venv}/pyvenv.cfg`);
  const stdlib = execFileSync(python, ['-c', 'import sysconfig; print(sysconfig.get_paths()["stdlib"])'], { encoding: 'utf8' }).trim();
  return { python, stdlib };
}

function kserveRootfs(rootfs, venv, server) {
  const { python, stdlib } = interpreterOf(venv);
  fs.cpSync(stdlib, path.join(rootfs, stdlib), { recursive: true, verbatimSymlinks: true, filter: (src) => !STDLIB_SKIPPED.has(path.relative(stdlib, src).split(path.sep)[0]) });
  fs.cpSync(venv, path.join(rootfs, venv), { recursive: true, verbatimSymlinks: true });
  const natives = execFileSync('find', [path.join(rootfs, stdlib), path.join(rootfs, venv), '-name', '*.so*', '-type', 'f'], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((file) => file.slice(rootfs.length));
  copyWithLibraries(rootfs, [python, '/bin/sh', ...natives]);
  fs.mkdirSync(path.join(rootfs, path.dirname(SERVER_PATH)), { recursive: true });
  fs.copyFileSync(server, path.join(rootfs, SERVER_PATH));
  writeFile(rootfs, '/etc/passwd', `root:x:0:0::/root:/bin/sh\nkserve:x:${UID}:${UID}::/tmp:/bin/sh\n`);
  writeFile(rootfs, '/etc/group', `root:x:0:\nkserve:x:${UID}:\n`);
  fs.mkdirSync(path.join(rootfs, 'tmp'), { recursive: true, mode: 0o1777 });
  return {
    Env: ['PATH=/usr/bin:/bin', 'HOME=/tmp', 'PYTHONDONTWRITEBYTECODE=1', 'PYTHONUNBUFFERED=1'],
    Entrypoint: [path.join(venv, 'bin', 'python'), SERVER_PATH],
    Cmd: ['--model_name', 'iris'],
    User: `${UID}:${UID}`,
    ExposedPorts: { '8080/tcp': {} },
  };
}

export function buildKServeImage(root, { venv, server, containerdSocket }) {
  const cacheDir = path.join(root, '.cache', 'image');
  fs.mkdirSync(cacheDir, { recursive: true });
  return buildOne('kserve-iris', (rootfs) => kserveRootfs(rootfs, venv, server), cacheDir, containerdSocket);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { venv: { type: 'string' }, server: { type: 'string' }, import: { type: 'string' } } });
  if (!values.venv || !values.server) {
    console.error('usage: kserve-image.mjs --venv VENV --server FILE [--import CONTAINERD_SOCKET]');
    process.exit(2);
  }
  console.log(buildKServeImage(process.cwd(), { venv: values.venv, server: values.server, containerdSocket: values.import }));
}
