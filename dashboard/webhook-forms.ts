// The forms of Settings → Webhooks and the delivery log, validated at the edge with zod. Checkbox
// groups arrive as a string (one box checked) or an array (several); datetime-local inputs carry no
// zone and are read as UTC, as every time on these pages is shown.
import { z } from 'zod';
import { OUTCOMES } from '../db/delivery-log.js';
import { WEBHOOK_EVENT_TYPES, webhookEventType } from '../domain/vocabulary.js';
import { parseDuration } from '../platform/config.js';

export const eventsField = z
  .union([webhookEventType, z.array(webhookEventType)], 'Choose events from the list.')
  .optional()
  .transform((value) => [...new Set(value === undefined ? [] : [value].flat())])
  .refine((events) => events.length > 0, 'Choose at least one event.');

export const addForm = z.object({
  url: z.string().trim().min(1, 'Enter the URL of your endpoint.').max(2048, 'The URL is too long.'),
  events: eventsField,
  mode: z.enum(['live', 'test'], 'Choose live or test mode.'),
});

export const eventsForm = z.object({ events: eventsField });

export const testEventForm = z.object({ event: z.enum(WEBHOOK_EVENT_TYPES, 'Choose an event type.') });

const utcMinute = z
  .string()
  .regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/, 'Enter a date and time.')
  .transform((text) => new Date(`${text.length === 16 ? `${text}:00` : text}Z`));

export const rotateForm = z
  .object({
    overlap: z
      .string()
      .trim()
      .transform((text, ctx) => {
        try {
          return parseDuration(text);
        } catch {
          ctx.addIssue({ code: 'custom', message: 'Enter the overlap as a duration, e.g. 24h, 90m or 7d.' });
          return z.NEVER;
        }
      })
      .refine((ms) => ms <= 30 * 86_400_000, 'The overlap can be at most 30 days.'),
    switch: z.enum(['end', 'now', 'at'], 'Choose when X-Service-Signature switches.'),
    switch_at: z.string().optional(),
  })
  .transform((form, ctx) => {
    const now = Date.now();
    if (form.switch === 'end') return { overlapMs: form.overlap, switchAt: undefined };
    if (form.switch === 'now') return { overlapMs: form.overlap, switchAt: new Date(now) };
    const at = utcMinute.safeParse(form.switch_at ?? '');
    if (!at.success || at.data.getTime() > now + form.overlap || at.data.getTime() < now - 60_000) {
      ctx.addIssue({ code: 'custom', message: 'The switch time must be between now and the end of the overlap.' });
      return z.NEVER;
    }
    return { overlapMs: form.overlap, switchAt: at.data };
  });

export const logQuery = z.object({
  event: webhookEventType.optional().catch(undefined),
  outcome: z.enum(OUTCOMES).optional().catch(undefined),
  before: z.coerce.number().int().positive().optional().catch(undefined),
});

export const rangeForm = z
  .object({ since: utcMinute, until: utcMinute })
  .refine((range) => range.since < range.until, 'The start of the range must be before its end.');

/** The value of a datetime-local input for `date` (UTC, to the minute). */
export function utcInputValue(date: Date): string {
  return date.toISOString().slice(0, 16);
}
