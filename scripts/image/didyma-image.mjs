#!/usr/bin/env node
// Builds the didyma image without Docker, from the Dockerfile itself: its
// runtime stage (ENV, WORKDIR, USER, EXPOSE, ENTRYPOINT, CMD, COPY) is read
// here, so the two cannot drift. The Node runtime is this machine's `node`
// and the libraries it loads; the build stage's outputs are this work tree's
// `npm run build` and a production-only `npm ci`.
//   node scripts/image/didyma-image.mjs [--import CONTAINERD_SOCKET]
// prints the image reference (its tag names the contents).
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { writeOciArchive } from './oci-archive.mjs';

export const IMAGE_REPOSITORY = 'didyma.local/didyma';
const NODE_PATH = '/usr/local/bin/node';
// The PATH of the official Node image, where `node` sits in /usr/local/bin.
const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
// Loaded with dlopen, so `ldd node` does not list it: @node-rs/argon2 needs it.
const EXTRA_LIBRARIES = ['librt.so.1'];

/** Dockerfile instructions with continuation lines joined and comments dropped. */
function instructions(text) {
  const joined = text.replace(/\\\r?\n/g, ' ');
  return joined
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [keyword, ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    });
}

const jsonOrWords = (args) => (args.startsWith('[') ? JSON.parse(args) : args.split(/\s+/));

/** The final stage of a Dockerfile as an OCI runtime config plus its COPY sources. */
export function runtimeStage(dockerfileText) {
  const all = instructions(dockerfileText);
  const lastFrom = all.map((i) => i.keyword).lastIndexOf('FROM');
  if (lastFrom < 0) throw new Error('Dockerfile has no FROM');
  const config = { Env: [PATH_ENV], WorkingDir: '/', ExposedPorts: {} };
  const copies = [];
  const nodeMajor = Number(all[lastFrom].args.match(/^node:(\d+)/)?.[1]);
  if (!nodeMajor) throw new Error(`Dockerfile runtime stage: FROM ${all[lastFrom].args} is not an official Node image (node:<major>…)`);
  for (const { keyword, args } of all.slice(lastFrom + 1)) {
    if (keyword === 'ENV') {
      for (const [, name, value] of args.matchAll(/(\w+)=("[^"]*"|\S+)/g)) config.Env.push(`${name}=${value.replace(/^"|"$/g, '')}`);
    } else if (keyword === 'WORKDIR') config.WorkingDir = path.posix.resolve(config.WorkingDir, args);
    else if (keyword === 'USER') config.User = args;
    else if (keyword === 'EXPOSE') for (const port of args.split(/\s+/)) config.ExposedPorts[port.includes('/') ? port : `${port}/tcp`] = {};
    else if (keyword === 'ENTRYPOINT') config.Entrypoint = jsonOrWords(args);
    else if (keyword === 'CMD') config.Cmd = jsonOrWords(args);
    else if (keyword === 'COPY') {
      const words = args.split(/\s+/);
      const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
      const [source, target] = words.filter((w) => !w.startsWith('--'));
      if (!source || !target) throw new Error(`COPY ${args}: expected one source and one target`);
      copies.push({ from, source, target: path.posix.resolve(config.WorkingDir, target), intoDirectory: target.endsWith('/') || target === '.' });
    } else throw new Error(`Dockerfile runtime stage: ${keyword} is not supported by ${path.basename(import.meta.url)}`);
  }
  return { config, copies, nodeMajor };
}

/** The image is filled with this machine's `node`: it must be the release line the Dockerfile names. */
export function checkNodeRelease(nodeMajor, version) {
  const major = Number(version.replace(/^v/, '').split('.')[0]);
  if (major !== nodeMajor) throw new Error(`the Dockerfile's base is node:${nodeMajor}, but the node on PATH is ${version}: build through make, which puts the project's Node.js first (scripts/node.sh)`);
}

/**
 * Where a COPY of the runtime stage takes its files in this work tree: the
 * build stage's /src is the work tree after `npm run build`, except its
 * node_modules, pruned to production dependencies (given as prodModules).
 */
export function sourceOf(copy, root, prodModules) {
  if (copy.from === undefined) return path.join(root, copy.source);
  if (copy.from !== 'build' || !copy.source.startsWith('/src/')) throw new Error(`COPY --from=${copy.from} ${copy.source}: unknown build output`);
  const relative = copy.source.slice('/src/'.length);
  return relative === 'node_modules' ? prodModules : path.join(root, relative);
}

/** Docker's COPY: a file into a directory target keeps its name; a directory's contents go to the target. */
function copyInto(rootfs, from, copy) {
  const target = fs.statSync(from).isFile() && copy.intoDirectory ? path.posix.join(copy.target, path.basename(from)) : copy.target;
  const to = path.join(rootfs, target);
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.cpSync(from, to, { recursive: true, verbatimSymlinks: true, filter: (src) => !src.endsWith('.tsbuildinfo') });
}

/** The machine's `node` and every shared library it loads, at their paths. */
function addNodeRuntime(rootfs, nodeMajor) {
  const node = fs.realpathSync(execFileSync('sh', ['-c', 'command -v node']).toString().trim());
  checkNodeRelease(nodeMajor, execFileSync(node, ['--version']).toString().trim());
  const libraries = execFileSync('ldd', [node])
    .toString()
    .split('\n')
    .map((line) => line.match(/(\/\S+)/)?.[1])
    .filter(Boolean);
  const libDir = path.dirname(libraries.find((lib) => lib.includes('libc.so')));
  for (const lib of [...libraries, ...EXTRA_LIBRARIES.map((name) => path.join(libDir, name))]) {
    const to = path.join(rootfs, lib);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(fs.realpathSync(lib), to);
  }
  fs.mkdirSync(path.join(rootfs, path.dirname(NODE_PATH)), { recursive: true });
  fs.copyFileSync(node, path.join(rootfs, NODE_PATH));
  fs.chmodSync(path.join(rootfs, NODE_PATH), 0o755);
  for (const dir of ['tmp', 'etc']) fs.mkdirSync(path.join(rootfs, dir), { recursive: true, mode: 0o1777 });
}

/** Production dependencies of package-lock.json, installed once per lock file. */
function productionModules(root, cacheDir) {
  const lock = fs.readFileSync(path.join(root, 'package-lock.json'));
  const dir = path.join(cacheDir, `prod-${crypto.createHash('sha256').update(lock).digest('hex').slice(0, 16)}`);
  if (!fs.existsSync(path.join(dir, 'node_modules', '.complete'))) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    for (const file of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(root, file), path.join(dir, file));
    // npm's report goes to stderr: this script's stdout carries only the image name.
    execFileSync('npm', ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: ['ignore', 2, 2] });
    fs.writeFileSync(path.join(dir, 'node_modules', '.complete'), '');
  }
  return path.join(dir, 'node_modules');
}

/** The label of an imported image naming the process it was built for (the test run, this script's parent). */
export const OWNER_LABEL = 'didyma.test/owner';

/** Whether a process is alive on this machine. */
const processAlive = (pid) => {
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
};

/** The owner named by the LABELS column of a `ctr images ls` row (`-`, or `key=value,…`). */
const ownerOf = (labels) => labels.split(',').find((label) => label.startsWith(`${OWNER_LABEL}=`))?.slice(OWNER_LABEL.length + 1);

/**
 * Earlier builds in `ctr images ls` output (each holds a few hundred MB of the
 * node's disk) but those in `keep` (the new one, those containers use) and
 * those whose owner still runs (another run on the node, before its pods
 * start): their names, and the digest-named references the kubelet's runtime
 * keeps for images no name points to any more.
 */
export function staleImages(listing, keep, repository = IMAGE_REPOSITORY, ownerAlive = processAlive) {
  const rows = listing
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((row) => row.length >= 3)
    .map((row) => ({ name: row[0], digest: row[2], owner: ownerOf(row[row.length - 1]) }));
  const stale = rows.filter((row) => row.name.startsWith(`${repository}:`) && !keep.includes(row.name) && !(row.owner && ownerAlive(row.owner)));
  const named = rows.filter((row) => !row.name.startsWith('sha256:') && !stale.includes(row));
  const orphans = rows.filter((row) => row.name.startsWith('sha256:') && !named.some((kept) => kept.digest === row.digest));
  return [...stale, ...orphans].map((row) => row.name);
}

/**
 * The name an archive's image is imported under before it is tagged: of this
 * process, and outside every repository that imports prune, so that a run
 * importing beside it cannot remove it.
 */
export const temporaryImageName = (repository) => `${repository}-build:${process.pid}`;

/**
 * Imports ARCHIVE (holding image TEMPORARYNAME) into the k8s.io namespace of
 * a containerd as REFERENCE, labelled with its owner (the parent process),
 * then removes the earlier builds of its repository.
 */
export function importArchive(containerdSocket, archive, temporaryName, reference) {
  const ctr = (...args) => execFileSync('ctr', ['--address', containerdSocket, '--namespace', 'k8s.io', ...args], { stdio: 'pipe' });
  ctr('images', 'import', archive);
  try {
    ctr('images', 'rm', reference);
  } catch {
    // Not imported before.
  }
  ctr('images', 'tag', temporaryName, reference);
  ctr('images', 'label', reference, `${OWNER_LABEL}=${process.ppid}`);
  ctr('images', 'rm', temporaryName);
  const inUse = ctr('containers', 'ls').toString().split('\n').slice(1).map((line) => line.trim().split(/\s+/)[1]).filter(Boolean);
  const stale = staleImages(ctr('images', 'ls').toString(), [reference, ...inUse], reference.slice(0, reference.lastIndexOf(':')));
  if (stale.length > 0) ctr('images', 'rm', ...stale);
}

export function buildImage(root, { containerdSocket } = {}) {
  const cacheDir = path.join(root, '.cache', 'image');
  const rootfs = path.join(cacheDir, 'rootfs');
  const { config, copies, nodeMajor } = runtimeStage(fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8'));
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const prodModules = productionModules(root, cacheDir);
  fs.rmSync(rootfs, { recursive: true, force: true });
  fs.mkdirSync(rootfs, { recursive: true });
  addNodeRuntime(rootfs, nodeMajor);
  for (const copy of copies) copyInto(rootfs, sourceOf(copy, root, prodModules), copy);
  fs.rmSync(path.join(rootfs, config.WorkingDir, 'node_modules', '.complete'), { force: true });

  const archive = path.join(cacheDir, 'didyma.tar');
  const temporaryName = temporaryImageName(IMAGE_REPOSITORY);
  const digest = writeOciArchive({ rootfs, name: temporaryName, config, out: archive });
  const reference = `${IMAGE_REPOSITORY}:${digest.slice('sha256:'.length, 'sha256:'.length + 12)}`;
  if (containerdSocket) importArchive(containerdSocket, archive, temporaryName, reference);
  fs.rmSync(rootfs, { recursive: true, force: true });
  return reference;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { import: { type: 'string' } } });
  console.log(buildImage(process.cwd(), { containerdSocket: values.import }));
}
