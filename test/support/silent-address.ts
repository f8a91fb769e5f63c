// An address whose port never answers a connection attempt, as a receiver's unroutable or
// firewalled address does (its SYN dropped, no refusal): a child process listens with a backlog of
// one and then never accepts (its event loop blocked), and two connections fill the kernel's queue,
// so that every later attempt waits. Only for tests of what a webhook attempt does with such an
// address (test/platform/pinned-connections.unit.test.ts).
import { spawn } from 'node:child_process';
import net from 'node:net';

export interface SilentAddress {
  port: number;
  close(): Promise<void>;
}

const LISTENER = `
const net = require('node:net');
const server = net.createServer().listen({ host: process.argv[1], port: 0, backlog: 1 }, () => {
  process.stdout.write(server.address().port + '\\n', () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0));
});`;

export async function silentAddress(address: string): Promise<SilentAddress> {
  const child = spawn(process.execPath, ['-e', LISTENER, address], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.stdout.once('data', (data: Buffer) => resolve(Number(data.toString().trim())));
  });
  // The queue holds backlog + 1 connections; these two fill it for as long as the child lives.
  const fillers = await Promise.all(
    [0, 1].map(
      () =>
        new Promise<net.Socket>((resolve, reject) => {
          const socket = net.connect({ host: address, port }, () => resolve(socket));
          socket.once('error', reject);
        }),
    ),
  );
  return {
    port,
    close: async () => {
      for (const socket of fillers) socket.destroy();
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await exited;
    },
  };
}
