// Carrier vocabularies (domain/carrier-vocabularies.ts, docs/carrier-events.md "Carrier vocabularies"):
// the one table that reads EasyPost's and Stripe Issuing's statuses as the service's states and
// exception reasons, and the request schema variants built from it (domain/carrier-event-schemas.ts).
import { describe, expect, it } from '@jest/globals';
import {
  EASYPOST_STATUSES,
  mapVocabularyStatus,
  STRIPE_ISSUING_STATUSES,
  VOCABULARY_TABLE,
  vocabularyStatuses,
} from '../../domain/carrier-vocabularies.js';
import { CARRIER_EVENT_VARIANTS } from '../../domain/carrier-event-schemas.js';
import { DISPATCH_STATUSES, EXCEPTION_REASONS } from '../../domain/vocabulary.js';

const OCCURRED_AT = '2026-11-20T10:00:00Z';

describe('the EasyPost table', () => {
  it.each([
    ['pre_transit', { status: 'dispatched' }],
    ['in_transit', { status: 'in_transit' }],
    ['out_for_delivery', { status: 'out_for_delivery' }],
    ['delivered', { status: 'delivered' }],
    ['available_for_pickup', { status: 'exception', reason: 'failed_attempt' }],
    ['return_to_sender', { status: 'exception', reason: 'returned' }],
    ['failure', { status: 'exception', reason: 'other' }],
    ['cancelled', { status: 'exception', reason: 'other' }],
  ])('maps %s to %j', (status, mapped) => {
    expect(mapVocabularyStatus('easypost', status)).toEqual({ ok: true, mapped });
  });

  it.each(['unknown', 'error'])('refuses %s, which says nothing about where the card is', (status) => {
    expect(mapVocabularyStatus('easypost', status)).toEqual({
      ok: false,
      problem: expect.stringContaining('says nothing about where the card is'),
    });
  });

  it('knows every EasyPost tracker status, and only those', () => {
    expect([...vocabularyStatuses('easypost')].sort()).toEqual([...EASYPOST_STATUSES].sort());
  });
});

describe('the Stripe Issuing table', () => {
  it.each([
    ['pending', { status: 'dispatched' }],
    ['shipped', { status: 'in_transit' }],
    ['delivered', { status: 'delivered' }],
    ['returned', { status: 'exception', reason: 'returned' }],
    ['failure', { status: 'exception', reason: 'other' }],
    ['canceled', { status: 'exception', reason: 'other' }],
  ])('maps %s to %j', (status, mapped) => {
    expect(mapVocabularyStatus('stripe_issuing', status)).toEqual({ ok: true, mapped });
  });

  it('knows every Stripe Issuing card shipping status, and only those', () => {
    expect([...vocabularyStatuses('stripe_issuing')].sort()).toEqual([...STRIPE_ISSUING_STATUSES].sort());
  });
});

describe('every mapping', () => {
  const mappings = Object.values(VOCABULARY_TABLE).flatMap((table) => Object.values(table).filter((m) => m !== undefined));

  it("lands on one of the service's five states, with a carrier exception reason exactly when it is an exception", () => {
    for (const mapped of mappings) {
      expect(DISPATCH_STATUSES).toContain(mapped.status);
      if (mapped.status === 'exception') expect(EXCEPTION_REASONS).toContain(mapped.reason);
      else expect(mapped.reason).toBeUndefined();
    }
  });

  it('refuses a status that is not in the vocabulary, naming the statuses it knows', () => {
    expect(mapVocabularyStatus('stripe_issuing', 'in_transit')).toEqual({
      ok: false,
      problem: expect.stringContaining('pending, shipped'),
    });
    expect(mapVocabularyStatus('easypost', 'toString')).toMatchObject({ ok: false });
  });
});

describe('the request schema variants', () => {
  it('take exactly the statuses the table maps (so the document and the table agree)', () => {
    const accepted = (
      variant: typeof CARRIER_EVENT_VARIANTS.easypost | typeof CARRIER_EVENT_VARIANTS.stripe_issuing,
      vocabulary: string,
      status: string,
    ) => variant.safeParse({ vocabulary, status, occurred_at: OCCURRED_AT }).success;
    for (const status of EASYPOST_STATUSES) {
      expect([status, accepted(CARRIER_EVENT_VARIANTS.easypost, 'easypost', status)]).toEqual([
        status,
        mapVocabularyStatus('easypost', status).ok,
      ]);
    }
    for (const status of STRIPE_ISSUING_STATUSES) {
      expect(accepted(CARRIER_EVENT_VARIANTS.stripe_issuing, 'stripe_issuing', status)).toBe(true);
    }
  });

  it('keep the service vocabulary as it was: the five states, `vocabulary` optional', () => {
    expect(CARRIER_EVENT_VARIANTS.service.safeParse({ status: 'in_transit', occurred_at: OCCURRED_AT }).success).toBe(true);
    expect(CARRIER_EVENT_VARIANTS.service.safeParse({ vocabulary: 'service', status: 'delivered', occurred_at: OCCURRED_AT }).success).toBe(
      true,
    );
    expect(CARRIER_EVENT_VARIANTS.service.safeParse({ status: 'shipped', occurred_at: OCCURRED_AT }).success).toBe(false);
  });
});
