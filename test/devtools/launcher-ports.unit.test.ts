// The ports a test's `npm start` listens on (test/support/processes.ts freeLauncherPorts). Tests stop
// `npm start` and start it again on the same ports; between the two, any outgoing connection on the
// machine (another test's Postgres or Temporal client) may be given one of them as its local port
// when they lie in the kernel's ephemeral range, and the next start then fails with "already in use"
// (seen in CI: DEMO_WEBHOOK_PORT in npm-start-signals). So they are picked below that range.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { freeLauncherPorts } from '../support/processes.js';

const [ephemeralLow] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);

const canListen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });

describe("an npm start under test's ports", () => {
  it('lie below the kernel’s ephemeral range, are distinct and free on every address', async () => {
    for (let i = 0; i < 20; i += 1) {
      const ports = Object.values(await freeLauncherPorts());
      expect(new Set(ports).size).toBe(ports.length);
      for (const port of ports) {
        expect(port).toBeLessThan(ephemeralLow);
        expect(port).toBeGreaterThanOrEqual(1024);
        expect(await canListen(port)).toBe(true);
      }
    }
  });
});
