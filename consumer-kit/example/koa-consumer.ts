// A runnable webhook consumer (Koa): verifies every request on its raw bytes, answers 200 at once
// (well within the service's 5 s) and does the work afterwards; dedupes redeliveries, keeps only
// the latest state per dispatch, and prompts activation when a card is delivered or the suggested
// action is Activate (docs/webhooks.md "Envelope").
//
//   WEBHOOK_SECRET=whsec_… PORT=4000 npx tsx consumer-kit/example/koa-consumer.ts
//   (during a rotation: WEBHOOK_SECRET=whsec_new,whsec_old)
import Koa from 'koa';
import { createDeduper, createLatestStateStore, diagnose, parse, shouldPromptActivation, verifyRequest, type WebhookEnvelope } from '../src/index.js'; // prettier-ignore

const MAX_BODY_BYTES = 1024 * 1024;

export function createConsumerApp(options: { secrets: string[]; onActivate?: (envelope: WebhookEnvelope) => void }) {
  const deduper = createDeduper();
  const latest = createLatestStateStore();
  const onActivate =
    options.onActivate ?? ((e: WebhookEnvelope) => console.log(`card ${e.data.id}: prompt the cardholder to activate the card`));

  const handle = (envelope: WebhookEnvelope) => {
    if (!deduper.firstSeen(envelope)) return; // a redelivery: already handled
    if (envelope.event === 'webhook_endpoint.disabled') {
      // Not about a card: another endpoint of ours was disabled after failing for days.
      console.warn(`webhook endpoint ${envelope.data.id} (${envelope.data.url}) disabled: ${envelope.data.disabled_reason}`);
      return;
    }
    if (!latest.apply(envelope)) return; // an older event arriving late: keep the newer state
    if (shouldPromptActivation(envelope.data)) onActivate(envelope);
  };

  const app = new Koa();
  app.use(async (ctx) => {
    if (ctx.method !== 'POST') ctx.throw(405);
    const raw = await readRawBody(ctx.req);
    const verified = verifyRequest(raw, ctx.headers, options.secrets);
    if (!verified.ok) {
      // A non-2xx makes the service retry (docs/webhooks.md "Delivery and retry schedule"); the log line says why it failed.
      console.warn(
        'webhook rejected:',
        verified.reason,
        diagnose(raw, ctx.headers, options.secrets).problems.map((p) => p.message),
      );
      ctx.status = 401;
      return;
    }
    const envelope = parse(raw);
    ctx.status = 200; // answer first; the work happens after the response is sent
    setImmediate(() => handle(envelope));
  });
  return app;
}

function readRawBody(req: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) reject(Object.assign(new Error('body too large'), { status: 413, expose: true }));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const secrets = (process.env.WEBHOOK_SECRET ?? '').split(',').map((s) => s.trim()).filter(Boolean); // prettier-ignore
  if (secrets.length === 0) {
    console.error('set WEBHOOK_SECRET to the secret `npm run admin -- webhook add` printed');
    process.exit(1);
  }
  const port = Number(process.env.PORT ?? 4000);
  createConsumerApp({ secrets }).listen(port, () => console.log(`webhook consumer listening on http://127.0.0.1:${port}/`));
}
