#!/usr/bin/env node
// Builds the images of the chart's bundled PostgreSQL and MinIO without
// Docker or a registry, from what the test services already installed on this
// machine: Debian's PostgreSQL server (scripts/services/postgres.sh) and the
// MinIO binary scripts/services/minio.sh builds (its TEST_MINIO_BINARY), each with the shared libraries
// `ldd` lists. They keep the contract the chart relies on in the official
// images: PostgreSQL's entry point initialises PGDATA from POSTGRES_USER,
// POSTGRES_PASSWORD and POSTGRES_DB, runs as uid 999 and puts pg_isready on
// PATH; MinIO is `minio` on PATH.
//   node scripts/image/dependency-images.mjs --minio BINARY [--import CONTAINERD_SOCKET]
// prints one JSON object: { "postgresql": REF, "rabbitmq": REF, "minio": REF }.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { importArchive, temporaryImageName } from './didyma-image.mjs';
import { writeOciArchive } from './oci-archive.mjs';

const REPOSITORY = 'didyma.local';
const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
// The official image's user: the chart runs the pod as this uid.
const POSTGRES_UID = 999;
const RABBITMQ_UID = 999;

/** ENTRYPOINT of the PostgreSQL image: the official image's first-start steps, in POSIX sh. */
const POSTGRES_ENTRYPOINT = `#!/bin/sh
set -eu
: "\${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
user="\${POSTGRES_USER:-postgres}"
db="\${POSTGRES_DB:-$user}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  initdb --username="$user" --pwfile=/dev/stdin --auth-local=trust --auth-host=scram-sha-256 \\
    --locale=C --encoding=UTF8 -D "$PGDATA" <<EOF
$POSTGRES_PASSWORD
EOF
  printf "listen_addresses = '*'\\n" >>"$PGDATA/postgresql.conf"
  printf 'host all all all scram-sha-256\\n' >>"$PGDATA/pg_hba.conf"
  if [ "$db" != postgres ]; then
    echo "CREATE DATABASE \\"$db\\"" | postgres --single -D "$PGDATA" postgres >/dev/null
  fi
fi
exec "$@"
`;

/**
 * Copies each file under ROOTFS (at its own path, or at the one `targets`
 * gives), with every shared library `ldd` lists for it at its path.
 */
export function copyWithLibraries(rootfs, files, targets = {}) {
  const wanted = new Map(files.map((file) => [file, targets[file] ?? file]));
  for (const file of files) {
    const listing = execFileSync('ldd', [file], { encoding: 'utf8' });
    for (const line of listing.split('\n')) {
      const library = line.match(/(\/\S+)/)?.[1];
      if (library) wanted.set(library, library);
    }
  }
  for (const [file, target] of wanted) {
    const to = path.join(rootfs, target);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(fs.realpathSync(file), to);
    fs.chmodSync(to, fs.statSync(file).mode & 0o777);
  }
}

export function writeFile(rootfs, file, text, mode = 0o644) {
  const to = path.join(rootfs, file);
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.writeFileSync(to, text, { mode });
}

/** The newest PostgreSQL of Debian's packages: /usr/lib/postgresql/N. */
function postgresHome() {
  const versions = fs.readdirSync('/usr/lib/postgresql').filter((v) => fs.existsSync(`/usr/lib/postgresql/${v}/bin/postgres`));
  if (versions.length === 0) throw new Error('no /usr/lib/postgresql/*/bin/postgres: run scripts/services/postgres.sh start first');
  const version = versions.sort((a, b) => Number(b) - Number(a))[0];
  return { version, bin: `/usr/lib/postgresql/${version}/bin`, lib: `/usr/lib/postgresql/${version}/lib`, share: `/usr/share/postgresql/${version}` };
}

function postgresRootfs(rootfs) {
  const pg = postgresHome();
  // The JIT provider pulls in LLVM (most of the package's size); PostgreSQL runs without it.
  const modules = fs.readdirSync(pg.lib).filter((name) => name.endsWith('.so') && name !== 'llvmjit.so').map((name) => path.join(pg.lib, name));
  const programs = ['initdb', 'postgres', 'pg_isready'].map((name) => path.join(pg.bin, name));
  copyWithLibraries(rootfs, [...programs, ...modules, '/bin/sh']);
  for (const dir of [pg.share, '/usr/share/zoneinfo']) fs.cpSync(dir, path.join(rootfs, dir), { recursive: true, verbatimSymlinks: true, filter: (src) => src !== path.join(pg.share, 'man') });
  writeFile(rootfs, '/usr/local/bin/docker-entrypoint.sh', POSTGRES_ENTRYPOINT, 0o755);
  writeFile(rootfs, '/etc/passwd', `root:x:0:0::/root:/bin/sh\npostgres:x:${POSTGRES_UID}:${POSTGRES_UID}::/var/lib/postgresql:/bin/sh\n`);
  writeFile(rootfs, '/etc/group', `root:x:0:\npostgres:x:${POSTGRES_UID}:\n`);
  for (const dir of ['tmp', 'var/run/postgresql', 'var/lib/postgresql/data']) fs.mkdirSync(path.join(rootfs, dir), { recursive: true, mode: 0o1777 });
  return {
    Env: [`${PATH_ENV}:${pg.bin}`, 'PGDATA=/var/lib/postgresql/data', 'TZ=UTC'],
    Entrypoint: ['/usr/local/bin/docker-entrypoint.sh'],
    Cmd: ['postgres'],
    User: `${POSTGRES_UID}:${POSTGRES_UID}`,
    ExposedPorts: { '5432/tcp': {} },
  };
}

/**
 * ENTRYPOINT of the RabbitMQ image: for the official image's command,
 * `rabbitmq-server`, the broker as Debian's scripts start it (those scripts
 * need coreutils, which this image has not); dyn_erl finds the Erlang root itself.
 */
const rabbitmqEntrypoint = (erts, home) => `#!/bin/sh
set -eu
if [ "$#" -gt 0 ] && [ "$1" != rabbitmq-server ]; then exec "$@"; fi
export RABBITMQ_HOME=${home} ERL_LIBS=${home}/plugins
exec ${erts}/bin/dyn_erl +W w +MBas ageffcbf +MHas ageffcbf +MBlmbcs 512 +MHlmbcs 512 +MMmcs 30 +P 1048576 +t 5000000 \\
  +stbt db +zdbbl 128000 +sbwt none +sbwtdcpu none +sbwtdio none +B i \\
  -noshell -noinput -s rabbit boot -boot start_sasl -syslog logger '[]' -syslog syslog_error_logger false \\
  -kernel prevent_overlapping_partitions false
`;

function rabbitmqRootfs(rootfs) {
  const erts = fs.readdirSync('/usr/lib/erlang').find((name) => name.startsWith('erts-'));
  const server = fs.existsSync('/usr/lib/rabbitmq/lib') && fs.readdirSync('/usr/lib/rabbitmq/lib').find((name) => name.startsWith('rabbitmq_server-'));
  if (!erts || !server) throw new Error('no Erlang runtime or rabbitmq-server under /usr/lib: run scripts/services/rabbitmq.sh start first');
  const ertsDir = `/usr/lib/erlang/${erts}`;
  const home = `/usr/lib/rabbitmq/lib/${server}`;
  for (const dir of ['/usr/lib/erlang', '/usr/lib/rabbitmq']) fs.cpSync(dir, path.join(rootfs, dir), { recursive: true, verbatimSymlinks: true });
  const natives = execFileSync('find', ['/usr/lib/erlang', '/usr/lib/rabbitmq', '-name', '*.so', '-type', 'f'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  const programs = ['beam.smp', 'dyn_erl', 'erlexec', 'epmd', 'erl_child_setup', 'inet_gethost'].map((name) => `${ertsDir}/bin/${name}`);
  copyWithLibraries(rootfs, [...programs, ...natives, '/bin/sh']);
  writeFile(rootfs, '/usr/local/bin/docker-entrypoint.sh', rabbitmqEntrypoint(ertsDir, home), 0o755);
  writeFile(rootfs, '/etc/passwd', `root:x:0:0::/root:/bin/sh\nrabbitmq:x:${RABBITMQ_UID}:${RABBITMQ_UID}::/var/lib/rabbitmq:/bin/sh\n`);
  writeFile(rootfs, '/etc/group', `root:x:0:\nrabbitmq:x:${RABBITMQ_UID}:\n`);
  for (const dir of ['tmp', 'var/lib/rabbitmq', 'var/log/rabbitmq', 'etc/rabbitmq/conf.d']) fs.mkdirSync(path.join(rootfs, dir), { recursive: true, mode: 0o1777 });
  return {
    // epmd is found on PATH; the cookie is written to HOME.
    Env: [`${PATH_ENV}:${ertsDir}/bin`, 'HOME=/var/lib/rabbitmq'],
    Entrypoint: ['/usr/local/bin/docker-entrypoint.sh'],
    Cmd: ['rabbitmq-server'],
    User: `${RABBITMQ_UID}:${RABBITMQ_UID}`,
    ExposedPorts: { '5672/tcp': {} },
  };
}

function minioRootfs(rootfs, binary) {
  if (!fs.existsSync(binary)) throw new Error(`${binary} is missing: run scripts/services/minio.sh build first`);
  copyWithLibraries(rootfs, [binary], { [binary]: '/usr/bin/minio' });
  for (const dir of ['tmp', 'data']) fs.mkdirSync(path.join(rootfs, dir), { recursive: true, mode: 0o1777 });
  return { Env: [PATH_ENV], Entrypoint: ['/usr/bin/minio'], ExposedPorts: { '9000/tcp': {} } };
}

/** Builds one image from FILL(rootfs) (its runtime config); returns its reference, tagged by content. */
export function buildOne(name, fill, cacheDir, containerdSocket) {
  const rootfs = path.join(cacheDir, `${name}-rootfs`);
  fs.rmSync(rootfs, { recursive: true, force: true });
  fs.mkdirSync(rootfs, { recursive: true });
  const config = fill(rootfs);
  const archive = path.join(cacheDir, `${name}.tar`);
  const temporaryName = temporaryImageName(`${REPOSITORY}/${name}`);
  const digest = writeOciArchive({ rootfs, name: temporaryName, config, out: archive });
  const reference = `${REPOSITORY}/${name}:${digest.slice('sha256:'.length, 'sha256:'.length + 12)}`;
  if (containerdSocket) importArchive(containerdSocket, archive, temporaryName, reference);
  fs.rmSync(rootfs, { recursive: true, force: true });
  return reference;
}

export function buildDependencyImages(root, { minioBinary, containerdSocket }) {
  const cacheDir = path.join(root, '.cache', 'image');
  fs.mkdirSync(cacheDir, { recursive: true });
  return {
    postgresql: buildOne('postgres', postgresRootfs, cacheDir, containerdSocket),
    rabbitmq: buildOne('rabbitmq', rabbitmqRootfs, cacheDir, containerdSocket),
    minio: buildOne('minio', (rootfs) => minioRootfs(rootfs, minioBinary), cacheDir, containerdSocket),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { minio: { type: 'string' }, import: { type: 'string' } } });
  if (!values.minio) {
    console.error('usage: dependency-images.mjs --minio BINARY [--import CONTAINERD_SOCKET]');
    process.exit(2);
  }
  console.log(JSON.stringify(buildDependencyImages(process.cwd(), { minioBinary: values.minio, containerdSocket: values.import })));
}
