// The status-read benchmark's baseline, run in its own process: plain node:http plus pg doing only
// the primary-key lookup of GET /v1/status/{id} and sending the stored JSON. No auth, no rate
// limit, no logging, no validation beyond "is there a row": the most a Node process can serve from
// this table, which the real API is compared against.
// Env: DATABASE_URL, PORT (0 = any); prints `{"ready":true,"port":…}` on stdout once listening.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPool } from '../../db/pool.js';

const pool = createPool(process.env.DATABASE_URL!, { applicationName: 'bench-bare' });
pool.on('error', (error) => process.stderr.write(`bare server: idle Postgres client failed: ${error.message}\n`));

// Same pool size as the API (db/pool.ts default) and the same stored text, sent as is, as the
// API's hot path does: neither side parses or re-serialises the record.
const RECORD_BY_ID = { name: 'bare-record-by-id', text: 'SELECT record::text AS record FROM dispatches WHERE id = $1' };
const PREFIX = '/v1/status/';

const server = http.createServer((req, res) => {
  const id = req.url?.startsWith(PREFIX) ? req.url.slice(PREFIX.length) : '';
  pool.query<{ record: string }>({ ...RECORD_BY_ID, values: [id] }).then(
    ({ rows }) => {
      if (rows.length === 0) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"dispatch_not_found"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(rows[0].record);
    },
    () => res.writeHead(500).end(),
  );
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ ready: true, port: (server.address() as AddressInfo).port })}\n`);
});

process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void pool.end().finally(() => process.exit(0));
});
