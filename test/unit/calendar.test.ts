// Business-day arithmetic on 'YYYY-MM-DD' dates (domain/calendar.ts).
import { describe, it, expect } from '@jest/globals';
import {
  addBusinessDays,
  businessDayOnOrAfter,
  businessDaysBetween,
  isBusinessDay,
  laterDate,
  nextBusinessDay,
  utcDateOf,
} from '../../domain/calendar.js';

// 2026-11-20 is a Friday, 2026-11-21 a Saturday, 2026-11-22 a Sunday, 2026-11-23 a Monday.

describe('isBusinessDay', () => {
  it('is true Monday to Friday', () => {
    for (const date of ['2026-11-23', '2026-11-24', '2026-11-25', '2026-11-26', '2026-11-27']) {
      expect(isBusinessDay(date)).toBe(true);
    }
  });

  it('is false on Saturday and Sunday', () => {
    expect(isBusinessDay('2026-11-21')).toBe(false);
    expect(isBusinessDay('2026-11-22')).toBe(false);
  });

  it('knows the weekday of dates before 1970 and of leap days', () => {
    expect(isBusinessDay('1969-12-31')).toBe(true); // a Wednesday
    expect(isBusinessDay('1969-12-28')).toBe(false); // a Sunday
    expect(isBusinessDay('2028-02-29')).toBe(true); // a Tuesday
  });
});

describe('nextBusinessDay', () => {
  it('is the following day inside a week', () => {
    expect(nextBusinessDay('2026-11-24')).toBe('2026-11-25');
  });

  it('skips the weekend from Friday, Saturday and Sunday', () => {
    expect(nextBusinessDay('2026-11-20')).toBe('2026-11-23');
    expect(nextBusinessDay('2026-11-21')).toBe('2026-11-23');
    expect(nextBusinessDay('2026-11-22')).toBe('2026-11-23');
  });

  it('crosses month and year ends', () => {
    expect(nextBusinessDay('2026-10-30')).toBe('2026-11-02');
    expect(nextBusinessDay('2027-12-31')).toBe('2028-01-03');
  });
});

describe('businessDayOnOrAfter', () => {
  it('keeps a business day', () => {
    expect(businessDayOnOrAfter('2026-11-20')).toBe('2026-11-20');
  });

  it('moves a weekend day to Monday', () => {
    expect(businessDayOnOrAfter('2026-11-21')).toBe('2026-11-23');
  });
});

describe('addBusinessDays', () => {
  it('adds days inside a week', () => {
    expect(addBusinessDays('2026-11-23', 3)).toBe('2026-11-26');
  });

  it('skips weekends: Friday + 1 is Monday', () => {
    expect(addBusinessDays('2026-11-20', 1)).toBe('2026-11-23');
  });

  it('skips every weekend in a long span: 10 business days are two weeks', () => {
    expect(addBusinessDays('2026-11-23', 10)).toBe('2026-12-07');
  });

  it('counts from a weekend day to the next business days', () => {
    expect(addBusinessDays('2026-11-21', 1)).toBe('2026-11-23');
  });

  it('returns the date itself for 0', () => {
    expect(addBusinessDays('2026-11-21', 0)).toBe('2026-11-21');
  });

  it('crosses a leap day', () => {
    expect(addBusinessDays('2028-02-28', 2)).toBe('2028-03-01');
  });

  it('refuses a negative or fractional count', () => {
    expect(() => addBusinessDays('2026-11-23', -1)).toThrow(RangeError);
    expect(() => addBusinessDays('2026-11-23', 1.5)).toThrow(RangeError);
  });
});

describe('businessDaysBetween', () => {
  it('is the inverse of addBusinessDays', () => {
    for (const n of [0, 1, 4, 5, 6, 12]) {
      expect(businessDaysBetween('2026-11-20', addBusinessDays('2026-11-20', n))).toBe(n);
    }
  });

  it('does not count weekend days', () => {
    expect(businessDaysBetween('2026-11-20', '2026-11-22')).toBe(0);
  });
});

describe('date validation', () => {
  it('refuses a date that does not exist', () => {
    expect(() => isBusinessDay('2026-02-30')).toThrow(RangeError);
    expect(() => isBusinessDay('2027-02-29')).toThrow(RangeError);
  });

  it('refuses anything but YYYY-MM-DD', () => {
    expect(() => isBusinessDay('2026-11-23T00:00:00Z')).toThrow(RangeError);
    expect(() => isBusinessDay('23/11/2026')).toThrow(RangeError);
  });
});

describe('utcDateOf', () => {
  it('takes the UTC date, not the local one, of a timestamp with an offset', () => {
    expect(utcDateOf('2026-11-23T23:30:00-02:00')).toBe('2026-11-24');
    expect(utcDateOf('2026-11-24T00:30:00+02:00')).toBe('2026-11-23');
  });

  it('refuses something that is not a timestamp', () => {
    expect(() => utcDateOf('soon')).toThrow(RangeError);
  });
});

describe('laterDate', () => {
  it('returns the later date whichever side it is on', () => {
    expect(laterDate('2026-11-24', '2026-12-01')).toBe('2026-12-01');
    expect(laterDate('2026-12-01', '2026-11-24')).toBe('2026-12-01');
  });
});
