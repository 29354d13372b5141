import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';

/**
 * Relays for the tests of TLS. A terminator: TLS in front of a plain TCP
 * service (the shared RabbitMQ, which the other suites reach in the clear),
 * with a CA of its own and a certificate for 127.0.0.1, each connection
 * relayed to the service once its handshake is done.
 */
export interface TlsTerminator {
  port: number;
  /** The CA that signed its certificate, for the clients' CA file. */
  caFile: string;
  /** Connections that carried data after their handshake: a client that refused the certificate sends none. */
  sessions(): number;
  close(): Promise<void>;
}

/** A CA and a server certificate for 127.0.0.1 in a fresh folder. */
function certificates(): { dir: string; key: string; cert: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'didyma-tls-'));
  const at = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-keyout', at('ca.key'), '-out', at('ca.crt'), '-subj', '/CN=didyma-test-tls-ca');
  fs.writeFileSync(at('server.ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', at('server.key'), '-out', at('server.csr'), '-subj', '/CN=127.0.0.1');
  openssl('x509', '-req', '-in', at('server.csr'), '-CA', at('ca.crt'), '-CAkey', at('ca.key'), '-CAcreateserial', '-days', '1', '-extfile', at('server.ext'), '-out', at('server.crt'));
  return { dir, key: fs.readFileSync(at('server.key'), 'utf8'), cert: fs.readFileSync(at('server.crt'), 'utf8') };
}

/** Pipes `client` to a new connection to `target` both ways, each kept in `sockets` until it closes. */
function relay(client: net.Socket, target: { host: string; port: number }, sockets: Set<net.Socket>): void {
  const upstream = net.connect(target.port, target.host);
  for (const socket of [client, upstream]) {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  }
  client.pipe(upstream).pipe(client);
  client.once('close', () => upstream.destroy());
  upstream.once('close', () => client.destroy());
}

/** Listens on `host`, a free port; `close` cuts the relayed connections. */
async function listening(server: net.Server, host: string, sockets: Set<net.Socket>) {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export async function startTlsTerminator(target: { host: string; port: number }): Promise<TlsTerminator> {
  const { dir, key, cert } = certificates();
  let sessions = 0;
  const sockets = new Set<net.Socket>();
  const server = tls.createServer({ key, cert }, (client) => {
    client.once('data', () => (sessions += 1));
    relay(client, target, sockets);
  });
  server.on('tlsClientError', () => undefined);
  const listener = await listening(server, '127.0.0.1', sockets);
  return {
    port: listener.port,
    caFile: path.join(dir, 'ca.crt'),
    sessions: () => sessions,
    async close() {
      await listener.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A plain TCP relay on `host` (another loopback address, say) to `target`. */
export async function startTcpRelay(host: string, target: { host: string; port: number }): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  return listening(
    net.createServer((client) => relay(client, target, sockets)),
    host,
    sockets,
  );
}
