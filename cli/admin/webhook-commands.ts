// `webhook add|list|remove|rotate-secret` (and `disable|enable`, webhook-disable-enable.ts): an issuer's
// webhook endpoints (docs/admin-cli.md "Operator CLI"), live or test mode (`add --test`: only
// test-mode dispatches' events, as Stripe's test endpoints); `list` shows whether each is disabled,
// why (`manual` or auto-disabled `failing`), since when, and since when its attempts fail.
// A new secret is printed exactly once (at `add` and at `rotate-secret`). URLs go through the SSRF
// guard when added (and again before every delivery). Rotation keeps the old secret valid in
// `webhook-signature` for the overlap, and `X-Service-Signature` on it until --switch-at
// (consumer-kit/README.md "Rotating a secret").
import type { Command } from 'commander';
import { z } from 'zod';
import { createWebhookEndpoint, listWebhookEndpoints, removeWebhookEndpoint, rotateWebhookSecret } from '../../db/webhook-endpoints.js';
import { isoTimestamp } from '../../domain/field-schemas.js';
import { MAX_OVERLAP_SECONDS } from '../../domain/webhook-endpoint-schemas.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../domain/vocabulary.js';
import { loadConfig, parseDuration } from '../../platform/config.js';
import { checkWebhookUrl, WebhookUrlRefused } from '../../platform/ssrf-guard.js';
import { issuerExists } from '../../db/issuers.js';
import { CliError, iso, issuerRefusal, output, parseOptions, table, withDatabase } from './context.js';
import { addDisableEnableCommands } from './webhook-disable-enable.js';

const id = z.string().trim().min(1, 'must not be empty');

const eventsOption = z.string().transform((text, ctx): WebhookEventType[] => {
  const names = [
    ...new Set(
      text
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = names.find((name) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(name));
  if (names.length === 0 || unknown !== undefined) {
    ctx.addIssue({ code: 'custom', message: `${unknown ? `unknown event "${unknown}"` : 'give at least one event'} (known: ${WEBHOOK_EVENT_TYPES.join(', ')})` }); // prettier-ignore
    return z.NEVER;
  }
  return names as WebhookEventType[];
});

const durationOption = z.string().transform((text, ctx) => {
  try {
    return parseDuration(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});

const addOptions = z.object({ issuer: id, url: z.string().trim().min(1, 'must not be empty'), events: eventsOption, test: z.boolean().optional() }); // prettier-ignore
const listOptions = z.object({ issuer: id.optional() });
const removeOptions = z.object({ id });
// The overlap is bounded as the API's `rotate_secret` bounds it: a rotation retires the old secret.
const overlapOption = durationOption.refine((ms) => ms <= MAX_OVERLAP_SECONDS * 1000, {
  message: `must not exceed ${MAX_OVERLAP_SECONDS / 86_400} days (${MAX_OVERLAP_SECONDS / 86_400}d), the bound of the API's rotate_secret`,
});
const rotateOptions = z.object({ id, overlap: overlapOption.default(24 * 3_600_000), switchAt: isoTimestamp.optional() });

/** Only the settings adding an endpoint needs (the guard's and the cap), read like the service reads them. */
function endpointSettings() {
  const { WEBHOOK_ALLOW_PRIVATE_NETWORKS, WEBHOOK_MAX_ENDPOINTS_PER_ISSUER } = process.env;
  return loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS, WEBHOOK_MAX_ENDPOINTS_PER_ISSUER });
}

export function registerWebhookCommands(program: Command): void {
  const webhook = program.command('webhook').description("manage an issuer's webhook endpoints");

  webhook
    .command('add')
    .description('add a webhook endpoint and print its secret (shown only this once)')
    .requiredOption('--issuer <id>', 'the issuer whose events the endpoint receives')
    .requiredOption('--url <url>', 'the consumer URL (http or https, publicly routable)')
    .requiredOption('--events <list>', `comma-separated event types (${WEBHOOK_EVENT_TYPES.join(', ')})`)
    .option('--test', 'a test-mode endpoint: receives only the events of test-mode dispatches (those of cds_test_ keys)')
    .action(async (raw: unknown, command: Command) => {
      const options = parseOptions(addOptions, raw);
      const mode = options.test ? 'test' : 'live';
      const settings = endpointSettings();
      try {
        await checkWebhookUrl(options.url, { allowPrivate: settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS });
      } catch (error) {
        if (error instanceof WebhookUrlRefused) throw new CliError(`invalid --url: ${error.reason}`);
        throw error;
      }
      const max = settings.WEBHOOK_MAX_ENDPOINTS_PER_ISSUER;
      const created = await withDatabase((db) => createWebhookEndpoint(db, { issuerId: options.issuer, url: options.url, events: options.events, mode }, max)); // prettier-ignore
      if (!created.ok) {
        if (created.reason === 'unknown_issuer') throw await withDatabase((db) => issuerRefusal(db, options.issuer));
        throw new CliError(`issuer ${options.issuer} already has ${max} webhook endpoints (the maximum): remove one first`); // prettier-ignore
      }
      const { endpoint, secret } = created;
      output(command, { id: endpoint.id, secret, url: endpoint.url, events: endpoint.events }, () =>
        [
          `Added ${endpoint.mode} webhook endpoint ${endpoint.id} for issuer ${endpoint.issuerId}`,
          `url: ${endpoint.url}`,
          `events: ${endpoint.events.join(', ')}`,
          '',
          `  ${secret}`,
          '',
          'Store this signing secret now: it is shown only once.',
        ].join('\n'),
      );
    });

  webhook
    .command('list')
    .description('list webhook endpoints (never their secrets)')
    .option('--issuer <id>', 'only this issuer’s endpoints')
    .action(async (raw: unknown, command: Command) => {
      const { issuer } = parseOptions(listOptions, raw);
      const endpoints = await withDatabase(async (db) => {
        // A mistyped issuer id must not read as an issuer without endpoints.
        if (issuer !== undefined && !(await issuerExists(db, issuer))) throw new CliError(`unknown issuer: ${issuer}`);
        return listWebhookEndpoints(db, { issuerId: issuer });
      });
      const data = endpoints.map((e) => ({
        id: e.id,
        issuer_id: e.issuerId,
        url: e.url,
        events: e.events,
        mode: e.mode,
        created_at: iso(e.createdAt),
        previous_secret_expires_at: iso(e.previousSecretExpiresAt),
        signature_switch_at: iso(e.signatureSwitchAt),
        disabled: e.pausedAt !== null,
        disabled_reason: e.pausedReason,
        disabled_at: iso(e.pausedAt),
        failing_since: iso(e.failingSince),
      }));
      output(command, { data }, () => {
        if (data.length === 0)
          return 'No webhook endpoints. Add one with: npm run admin -- webhook add --issuer ID --url URL --events e1,e2';
        return table(
          ['ID', 'ISSUER', 'MODE', 'URL', 'EVENTS', 'CREATED', 'ROTATING UNTIL', 'DISABLED', 'FAILING SINCE'],
          data.map((e) => [
            e.id,
            e.issuer_id,
            e.mode,
            e.url,
            e.events.join(','),
            e.created_at ?? '',
            e.previous_secret_expires_at ?? '-',
            e.disabled ? `${e.disabled_reason} since ${e.disabled_at}` : '-',
            e.failing_since ?? '-',
          ]),
        );
      });
    });

  webhook
    .command('remove')
    .description('remove a webhook endpoint: it receives nothing more (idempotent)')
    .requiredOption('--id <id>', 'the endpoint id (whe_…)')
    .action(async (raw: unknown, command: Command) => {
      const options = parseOptions(removeOptions, raw);
      const removed = await withDatabase((db) => removeWebhookEndpoint(db, options.id));
      if (!removed) throw new CliError(`unknown webhook endpoint: ${options.id}`);
      const at = removed.removedAt.toISOString();
      output(command, { id: removed.id, removed_at: at }, () =>
        removed.alreadyRemoved ? `Webhook endpoint ${removed.id} was already removed at ${at}` : `Removed webhook endpoint ${removed.id}`,
      );
    });

  webhook
    .command('rotate-secret')
    .description('replace the signing secret; the old one stays valid during the overlap (the new one is shown only once)')
    .requiredOption('--id <id>', 'the endpoint id (whe_…)')
    .option('--overlap <duration>', 'how long the old secret keeps signing webhook-signature, e.g. 24h', '24h')
    .option('--switch-at <iso>', 'when X-Service-Signature moves to the new secret (default: end of the overlap)')
    .action(async (raw: unknown, command: Command) => {
      const options = parseOptions(rotateOptions, raw);
      const switchAt = options.switchAt !== undefined ? new Date(options.switchAt) : undefined;
      if (switchAt && switchAt.getTime() > Date.now() + options.overlap)
        throw new CliError('invalid --switch-at: must not be later than the end of the overlap (now + --overlap)');
      const rotated = await withDatabase((db) => rotateWebhookSecret(db, options.id, { overlapMs: options.overlap, switchAt }));
      if (!rotated) throw new CliError(`unknown webhook endpoint: ${options.id}`);
      const json = {
        id: rotated.id,
        secret: rotated.secret,
        previous_secret_expires_at: iso(rotated.previousSecretExpiresAt),
        signature_switch_at: iso(rotated.signatureSwitchAt),
      };
      output(command, json, () =>
        [
          `Rotated the secret of webhook endpoint ${rotated.id}`,
          '',
          `  ${rotated.secret}`,
          '',
          'Store this signing secret now: it is shown only once.',
          `webhook-signature carries both secrets until ${json.previous_secret_expires_at};`,
          `X-Service-Signature uses the old secret until ${json.signature_switch_at}, the new one from then on.`,
        ].join('\n'),
      );
    });

  addDisableEnableCommands(webhook);
}
