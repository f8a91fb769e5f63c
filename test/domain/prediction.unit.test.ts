// Delivery window prediction, foundation version (domain/prediction.ts): transit table in business
// days, Low confidence and a wider window without history, and how each status moves the window.
import { describe, it, expect } from '@jest/globals';
import {
  confidenceFromHistory,
  DEFAULT_TRANSIT_BUSINESS_DAYS,
  LOW_CONFIDENCE_EXTRA_DAYS,
  predict,
  TRANSIT_BUSINESS_DAYS,
  type PredictionInput,
} from '../../domain/prediction.js';
import { addBusinessDays, businessDaysBetween } from '../../domain/calendar.js';
import type { DispatchState } from '../../domain/state-machine.js';
import { DISPATCH_STATUSES, EXCEPTION_REASONS } from '../../domain/vocabulary.js';

// Dispatched on Friday 2026-11-20 to France, whose table entry is 2 to 4 business days, so the Low
// window runs from Tuesday 24 (2 business days) to Monday 30 (4 + 2 business days).
const DISPATCHED_AT = '2026-11-20T10:00:00.000Z';
const FRANCE = { postal_code: '75011', country_code: 'FR' };

function input(state: Partial<DispatchState> & Pick<DispatchState, 'status'>, today: string, country = FRANCE): PredictionInput {
  return { dispatchDate: DISPATCHED_AT, destination: country, state: { statusSince: DISPATCHED_AT, ...state }, today };
}

describe('transit table', () => {
  it('covers at least 30 countries, each with 1 ≤ min ≤ max business days', () => {
    const entries = Object.entries(TRANSIT_BUSINESS_DAYS);
    expect(entries.length).toBeGreaterThanOrEqual(30);
    for (const [country, [min, max]] of entries) {
      expect(country).toMatch(/^[A-Z]{2}$/);
      expect(min).toBeGreaterThanOrEqual(1);
      expect(max).toBeGreaterThanOrEqual(min);
    }
  });
});

describe('confidence', () => {
  it('is Low with little history for the postal code, Medium with some, High with plenty', () => {
    expect(confidenceFromHistory(0)).toBe('Low');
    expect(confidenceFromHistory(9)).toBe('Low');
    expect(confidenceFromHistory(10)).toBe('Medium');
    expect(confidenceFromHistory(49)).toBe('Medium');
    expect(confidenceFromHistory(50)).toBe('High');
  });

  it('is Low for a card in flight, since the foundation has no delivery history', () => {
    expect(predict(input({ status: 'dispatched' }, '2026-11-20')).confidence).toBe('Low');
    expect(predict(input({ status: 'in_transit' }, '2026-11-20')).confidence).toBe('Low');
  });
});

describe('dispatched and in_transit', () => {
  it('counts the table business days from the dispatch date, widened at the late end for Low', () => {
    expect(predict(input({ status: 'dispatched' }, '2026-11-20')).window).toEqual({ min: '2026-11-24', max: '2026-11-30' });
  });

  it('makes a Low window LOW_CONFIDENCE_EXTRA_DAYS business days wider than the table', () => {
    const { window } = predict(input({ status: 'dispatched' }, '2026-11-20'));
    const [tableMin, tableMax] = TRANSIT_BUSINESS_DAYS.FR;
    expect(LOW_CONFIDENCE_EXTRA_DAYS).toBeGreaterThan(0);
    expect(businessDaysBetween(window.min, window.max)).toBe(tableMax - tableMin + LOW_CONFIDENCE_EXTRA_DAYS);
  });

  it('gives in_transit the same window as dispatched', () => {
    const dispatched = predict(input({ status: 'dispatched' }, '2026-11-20'));
    const inTransit = predict(input({ status: 'in_transit', statusSince: '2026-11-21T08:00:00.000Z' }, '2026-11-21'));
    expect(inTransit).toEqual(dispatched);
  });

  it('starts counting on Monday for a card dispatched on a Saturday', () => {
    const prediction = predict({ ...input({ status: 'dispatched' }, '2026-11-21'), dispatchDate: '2026-11-21T09:00:00Z' });
    expect(prediction.window.min).toBe('2026-11-25');
  });

  it('uses the UTC date of a dispatch timestamp given with an offset', () => {
    // 23:30 on Thursday in UTC-2 is already Friday in UTC.
    const prediction = predict({ ...input({ status: 'dispatched' }, '2026-11-20'), dispatchDate: '2026-11-19T23:30:00-02:00' });
    expect(prediction.window).toEqual({ min: '2026-11-24', max: '2026-11-30' });
  });

  it('reads the country code in any letter case', () => {
    const lower = predict(input({ status: 'dispatched' }, '2026-11-20', { postal_code: '75011', country_code: 'fr' }));
    expect(lower).toEqual(predict(input({ status: 'dispatched' }, '2026-11-20')));
  });

  it('uses the documented default range for a country missing from the table', () => {
    expect(TRANSIT_BUSINESS_DAYS.ZW).toBeUndefined();
    const { window } = predict(input({ status: 'dispatched' }, '2026-11-20', { postal_code: '00263', country_code: 'ZW' }));
    const [min, max] = DEFAULT_TRANSIT_BUSINESS_DAYS;
    expect(window).toEqual({
      min: addBusinessDays('2026-11-20', min),
      max: addBusinessDays('2026-11-20', max + LOW_CONFIDENCE_EXTRA_DAYS),
    });
  });

  it('starts the window today once today is past its start', () => {
    expect(predict(input({ status: 'in_transit' }, '2026-11-25')).window).toEqual({ min: '2026-11-25', max: '2026-11-30' });
  });

  it('starts the window on the next business day when today is a weekend day past its start', () => {
    expect(predict(input({ status: 'in_transit' }, '2026-11-28')).window).toEqual({ min: '2026-11-30', max: '2026-11-30' });
  });

  it('slides the whole window, keeping its width, once today is past its end', () => {
    // Wednesday 2 December: the 4-business-day-wide window now runs to Tuesday 8 December.
    expect(predict(input({ status: 'in_transit' }, '2026-12-02')).window).toEqual({ min: '2026-12-02', max: '2026-12-08' });
  });

  it('slides a late window to start on Monday when today is a weekend day', () => {
    expect(predict(input({ status: 'in_transit' }, '2026-12-05')).window).toEqual({ min: '2026-12-07', max: '2026-12-11' });
  });
});

describe('out_for_delivery', () => {
  it('is today, with High confidence, when the card went out today', () => {
    const prediction = predict(input({ status: 'out_for_delivery', statusSince: '2026-11-24T07:00:00.000Z' }, '2026-11-24'));
    expect(prediction).toEqual({ window: { min: '2026-11-24', max: '2026-11-24' }, confidence: 'High' });
  });

  it('is today even on a Saturday when the card went out that Saturday', () => {
    const prediction = predict(input({ status: 'out_for_delivery', statusSince: '2026-11-28T07:00:00.000Z' }, '2026-11-28'));
    expect(prediction.window).toEqual({ min: '2026-11-28', max: '2026-11-28' });
  });

  it('is today when the card went out on an earlier day and today is a business day', () => {
    const prediction = predict(input({ status: 'out_for_delivery', statusSince: '2026-11-24T07:00:00.000Z' }, '2026-11-25'));
    expect(prediction.window).toEqual({ min: '2026-11-25', max: '2026-11-25' });
  });

  it('is the next business day when the card went out on an earlier day and today is a weekend day', () => {
    const prediction = predict(input({ status: 'out_for_delivery', statusSince: '2026-11-27T07:00:00.000Z' }, '2026-11-28'));
    expect(prediction.window).toEqual({ min: '2026-11-30', max: '2026-11-30' });
  });
});

describe('delivered', () => {
  it('is the delivery date, with High confidence, whatever today is', () => {
    const prediction = predict(input({ status: 'delivered', statusSince: '2026-11-25T14:00:00.000Z' }, '2026-12-10'));
    expect(prediction).toEqual({ window: { min: '2026-11-25', max: '2026-11-25' }, confidence: 'High' });
  });

  it('takes the UTC date of the delivery instant', () => {
    const prediction = predict(input({ status: 'delivered', statusSince: '2026-11-25T23:30:00-03:00' }, '2026-11-26'));
    expect(prediction.window).toEqual({ min: '2026-11-26', max: '2026-11-26' });
  });
});

describe('exception', () => {
  const exceptionOn = (today: string, exceptionReason?: DispatchState['exceptionReason']) =>
    predict(input({ status: 'exception', statusSince: `${today}T09:00:00.000Z`, exceptionReason }, today));

  it('has Low confidence', () => {
    expect(exceptionOn('2026-11-24', 'postal_delay').confidence).toBe('Low');
  });

  it('never ends before the window the card had before the exception', () => {
    // A failed attempt on Tuesday 24 alone would give 25–27 November; the transit window ran to the 30th.
    expect(exceptionOn('2026-11-24', 'failed_attempt').window).toEqual({ min: '2026-11-25', max: '2026-11-30' });
  });

  it('counts from today once the original window has passed', () => {
    // Thursday 10 December + 1..3 business days.
    expect(exceptionOn('2026-12-10', 'failed_attempt').window).toEqual({ min: '2026-12-11', max: '2026-12-15' });
  });

  it('gives a lost card a longer window than a failed delivery attempt', () => {
    const lost = exceptionOn('2026-12-10', 'lost').window;
    const failed = exceptionOn('2026-12-10', 'failed_attempt').window;
    expect(lost.max > failed.max).toBe(true);
  });

  it('treats an exception without a reason as reason other', () => {
    expect(exceptionOn('2026-12-10')).toEqual(exceptionOn('2026-12-10', 'other'));
  });
});

describe('invariants', () => {
  const countries = ['FR', 'GB', 'US', 'AU', 'MX', 'ZW'];
  const todays = ['2026-11-20', '2026-11-21', '2026-11-24', '2026-11-29', '2026-12-24', '2027-01-04'];

  function* everyCase(): Generator<PredictionInput> {
    for (const status of DISPATCH_STATUSES)
      for (const country_code of countries)
        for (const today of todays)
          for (const exceptionReason of status === 'exception' ? EXCEPTION_REASONS : [undefined]) {
            yield input({ status, statusSince: `${today}T06:00:00.000Z`, exceptionReason }, today, { postal_code: '1000', country_code });
          }
  }

  it('always gives two YYYY-MM-DD dates with min ≤ max', () => {
    for (const prediction of Array.from(everyCase(), predict)) {
      expect(prediction.window.min).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(prediction.window.max).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(prediction.window.min <= prediction.window.max).toBe(true);
    }
  });

  it('never predicts a day before today for a card not yet delivered', () => {
    for (const caseInput of everyCase()) {
      if (caseInput.state.status === 'delivered') continue;
      expect(predict(caseInput).window.min >= caseInput.today).toBe(true);
    }
  });
});

describe("business days of the destination country's calendar", () => {
  it('skips the public holidays of the destination country (FR: 25 December and 1 January)', () => {
    // FR is 2–4 business days, widened by 2 for Low: from Wed 23 Dec, 24 Dec is day 1, 25 Dec is a
    // holiday, Mon 28 Dec is day 2; day 6 lands on Mon 4 Jan because 1 Jan is a holiday too.
    const prediction = predict({
      dispatchDate: '2026-12-23T10:00:00Z',
      destination: { postal_code: '75011', country_code: 'FR' },
      state: { status: 'dispatched', statusSince: '2026-12-23T10:00:00.000Z' },
      today: '2026-12-23',
    });
    expect(prediction.window).toEqual({ min: '2026-12-28', max: '2027-01-04' });
  });
});
