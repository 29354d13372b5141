import net, { type AddressInfo } from 'node:net';

export interface SilentServer {
  port: number;
  url: string;
  /** Connections open on the server's side right now. */
  connections(): Promise<number>;
  /** Resolves at the next connection accepted. */
  accepted(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A TCP server that accepts connections, reads whatever comes and never
 * writes a byte: the peer that keeps a client waiting forever. It reads so
 * that it sees a connection the client closed, which its count then drops.
 */
export async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    connections: () => new Promise((resolve, reject) => server.getConnections((error, count) => (error ? reject(error) : resolve(count)))),
    accepted: () => new Promise((resolve) => server.once('connection', () => resolve())),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
