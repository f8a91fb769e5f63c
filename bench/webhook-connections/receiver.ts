// The webhook receiver of bench/webhook-connections: an HTTPS server in its own process (so that its
// CPU is not the client's), answering every POST 200 with a short body, as consumers do. GET /stats
// answers its CPU so far (process.cpuUsage, µs), the TLS connections it accepted and the requests.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

const [keyPath, certPath] = process.argv.slice(2);
let connections = 0;
let requests = 0;
const server = https.createServer({ key: readFileSync(keyPath), cert: readFileSync(certPath) }, (req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    const cpu = process.cpuUsage();
    res.end(JSON.stringify({ cpuUs: cpu.user + cpu.system, connections, requests }));
    return;
  }
  requests += 1;
  req.resume();
  req.on('end', () => res.end('{"received":true}'));
});
server.on('secureConnection', () => (connections += 1));
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
