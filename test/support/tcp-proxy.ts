// A plain TCP proxy in front of a real server (the tests' Temporal dev server), for tests that must
// stop a process between two steps of its work: while `hold` is on, what the clients send is read
// and dropped, so a call made then never reaches the server (the process waits for its answer),
// and a process killed meanwhile leaves nothing behind it in transit. Answers still flow back.
import net from 'node:net';

export interface TcpProxy {
  /** host:port to give the process instead of the server's. */
  address: string;
  /** From now on, drop what clients send. */
  hold(): void;
  /** Forward again (what was dropped stays dropped). */
  pass(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  let holding = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, host);
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      if (!holding) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    hold: () => (holding = true),
    pass: () => (holding = false),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
