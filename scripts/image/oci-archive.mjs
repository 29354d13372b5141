#!/usr/bin/env node
// Writes a one-layer OCI image archive (what `ctr images import` reads) from
// a root filesystem directory: no Docker engine, no registry. Only Node's
// built-ins and GNU tar, so scripts/services/cluster.sh can use it before
// `npm ci`.
//   node scripts/image/oci-archive.mjs --rootfs DIR --name REF --config JSON --out FILE.tar
// JSON is the image's runtime configuration (Entrypoint, Cmd, Env, User,
// WorkingDir, ExposedPorts), as in the OCI image spec.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

/** Reproducible tar flags: the same files give the same layer digest. */
const TAR_FLAGS = ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '--format=posix', '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime'];

function sha256OfFile(file) {
  const hash = crypto.createHash('sha256');
  const fd = fs.openSync(file, 'r');
  const buffer = Buffer.alloc(1 << 20);
  try {
    for (let read; (read = fs.readSync(fd, buffer, 0, buffer.length, null)) > 0; ) hash.update(buffer.subarray(0, read));
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

/** Stores a JSON document as a blob; returns its descriptor. */
function writeJsonBlob(blobs, mediaType, value, extra = {}) {
  const bytes = Buffer.from(JSON.stringify(value));
  const digest = crypto.createHash('sha256').update(bytes).digest('hex');
  fs.writeFileSync(path.join(blobs, digest), bytes);
  return { mediaType, digest: `sha256:${digest}`, size: bytes.length, ...extra };
}

/**
 * Builds the archive of ROOTFS as image NAME with runtime CONFIG; returns the
 * layer's digest (it names the contents: same files, same digest).
 */
export function writeOciArchive({ rootfs, name, config, out }) {
  const layout = fs.mkdtempSync(path.join(path.dirname(path.resolve(out)), '.oci-layout-'));
  try {
    const blobs = path.join(layout, 'blobs', 'sha256');
    fs.mkdirSync(blobs, { recursive: true });
    const layerFile = path.join(blobs, 'layer.tmp');
    execFileSync('tar', [...TAR_FLAGS, '-C', rootfs, '-cf', layerFile, '.']);
    const layerDigest = sha256OfFile(layerFile);
    const layerSize = fs.statSync(layerFile).size;
    fs.renameSync(layerFile, path.join(blobs, layerDigest));

    const imageConfig = {
      architecture: os.arch() === 'arm64' ? 'arm64' : 'amd64',
      os: 'linux',
      created: '1970-01-01T00:00:00Z',
      config,
      rootfs: { type: 'layers', diff_ids: [`sha256:${layerDigest}`] },
      history: [{ created: '1970-01-01T00:00:00Z', created_by: 'scripts/image/oci-archive.mjs' }],
    };
    const configDescriptor = writeJsonBlob(blobs, 'application/vnd.oci.image.config.v1+json', imageConfig);
    const manifest = {
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: configDescriptor,
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: `sha256:${layerDigest}`, size: layerSize }],
    };
    const tag = name.slice(name.lastIndexOf(':') + 1);
    const manifestDescriptor = writeJsonBlob(blobs, manifest.mediaType, manifest, {
      annotations: { 'io.containerd.image.name': name, 'org.opencontainers.image.ref.name': tag },
      platform: { architecture: imageConfig.architecture, os: 'linux' },
    });
    fs.writeFileSync(path.join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    fs.writeFileSync(path.join(layout, 'index.json'), JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests: [manifestDescriptor] }));
    execFileSync('tar', [...TAR_FLAGS, '-C', layout, '-cf', out, 'oci-layout', 'index.json', 'blobs']);
    return `sha256:${layerDigest}`;
  } finally {
    fs.rmSync(layout, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { rootfs: { type: 'string' }, name: { type: 'string' }, config: { type: 'string' }, out: { type: 'string' } } });
  if (!values.rootfs || !values.name || !values.config || !values.out) {
    console.error('usage: oci-archive.mjs --rootfs DIR --name REF --config JSON --out FILE.tar');
    process.exit(2);
  }
  writeOciArchive({ rootfs: values.rootfs, name: values.name, config: JSON.parse(values.config), out: values.out });
}
