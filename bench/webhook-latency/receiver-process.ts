// The webhook-latency benchmark's receiver, in its own process: the tests' real node:http receiver
// (test/support/receiver.ts) on 127.0.0.1, answering 200 to every request once its body has fully
// arrived. It streams one JSON line per arrival on stdout so that the driver can match arrivals to
// the carrier events it sent (latency) and keep a fixed number of events in flight (throughput).
// A request from the product carries X-Service-Signature, checked here with the endpoint's secret
// (the consumer kit's `verify`); one from the minimal workflow carries `x-bench-minimal: 1`.
// Env: BENCH_SECRET_FILE, where the driver writes the endpoint's secret once the endpoint exists
// (which needs this receiver's URL first); read at the first signed request. BENCH_TLS_KEY_FILE and
// BENCH_TLS_CERT_FILE (PEM): serve HTTPS with them (bench/capacity BENCH_WEBHOOK_TLS).
// Prints `{"ready":true,"url":…}` first.
import { readFileSync } from 'node:fs';
import { verify } from '../../consumer-kit/src/index.js';
import { startReceiver, type ReceivedRequest } from '../../test/support/receiver.js';

/** One arrival, as streamed to the driver. */
export type Arrival =
  | { kind: 'minimal'; t: number }
  | {
      kind: 'ours';
      /** Date.now() when the whole body had arrived. */
      t: number;
      dispatchId: string;
      event: string;
      status: string;
      eventId: string;
      attempt: number;
      verified: boolean;
      bytes: number;
    };

let secret: string | undefined;

function describe(request: ReceivedRequest): Arrival {
  if (request.headers['x-bench-minimal']) return { kind: 'minimal', t: request.receivedAt };
  secret ??= readFileSync(process.env.BENCH_SECRET_FILE!, 'utf8').trim();
  const envelope = JSON.parse(request.body.toString('utf8')) as { event: string; data: { id: string; status: string } };
  return {
    kind: 'ours',
    t: request.receivedAt,
    dispatchId: envelope.data.id,
    event: envelope.event,
    status: envelope.data.status,
    eventId: String(request.headers['x-service-event-id']),
    attempt: Number(request.headers['x-service-delivery-attempt']),
    verified: verify(request.body, request.headers['x-service-signature'] as string | undefined, secret),
    bytes: request.body.length,
  };
}

const { BENCH_TLS_KEY_FILE: keyFile, BENCH_TLS_CERT_FILE: certFile } = process.env;
const receiver = await startReceiver({
  ...(keyFile && certFile && { tls: { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8') } }),
  respond: (n) => {
    const request = receiver.requests[n - 1];
    process.stdout.write(`${JSON.stringify(describe(request))}\n`);
    // Nothing is kept: a long run must not grow this process.
    receiver.requests[n - 1] = undefined as unknown as ReceivedRequest;
    return 200;
  },
});
process.stdout.write(`${JSON.stringify({ ready: true, url: receiver.url })}\n`);
process.once('SIGTERM', () => void receiver.close().then(() => process.exit(0)));
