// Business-day arithmetic on 'YYYY-MM-DD' dates (domain/calendar.ts), with and without the public
// holidays of a destination country (domain/holidays.ts).
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
import { isPublicHoliday, publicHolidayDates } from '../../domain/holidays.js';

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

describe('public holidays (national, type public)', () => {
  it('knows Christmas and New Year’s Day in France', () => {
    expect(isPublicHoliday('FR', '2026-12-25')).toBe(true);
    expect(isPublicHoliday('FR', '2027-01-01')).toBe(true);
    expect(isPublicHoliday('FR', '2026-12-24')).toBe(false);
  });

  it('knows both Christmas days in Germany', () => {
    expect(isPublicHoliday('DE', '2026-12-25')).toBe(true);
    expect(isPublicHoliday('DE', '2026-12-26')).toBe(true);
  });

  it('knows Boxing Day in Great Britain, and its Monday substitute when it falls on a Saturday', () => {
    expect(isPublicHoliday('GB', '2025-12-26')).toBe(true);
    expect(isPublicHoliday('GB', '2026-12-28')).toBe(true); // 26 December 2026 is a Saturday
  });

  it('knows Thanksgiving in the United States', () => {
    expect(isPublicHoliday('US', '2026-11-26')).toBe(true);
    expect(isPublicHoliday('US', '2026-11-27')).toBe(false);
  });

  it('ignores regional holidays: Epiphany is kept in Bavaria only, not nationally', () => {
    expect(isPublicHoliday('DE', '2026-01-06')).toBe(false);
  });

  it('ignores days that are not public holidays (Christmas Eve in Germany is a bank half-day)', () => {
    expect(isPublicHoliday('DE', '2026-12-24')).toBe(false);
  });

  it('accepts a lower-case country code', () => {
    expect(isPublicHoliday('fr', '2026-12-25')).toBe(true);
  });

  it('has no holidays for a country the library does not know', () => {
    expect(publicHolidayDates('ZZ', 2026).size).toBe(0);
    expect(isPublicHoliday('ZZ', '2026-12-25')).toBe(false);
  });

  it('refuses a subdivision or a malformed date rather than guessing', () => {
    expect(() => isPublicHoliday('DE-BY', '2026-12-25')).toThrow(RangeError);
    expect(() => isPublicHoliday('DE', '25/12/2026')).toThrow(RangeError);
  });

  it('counts every day of a holiday lasting several days (Eid al-Fitr in Bosnia, from 20 March 2026)', () => {
    const days = publicHolidayDates('BA', 2026);
    expect(days.has('2026-03-20')).toBe(true);
    expect(days.has('2026-03-21')).toBe(true);
  });
});

describe('business days of a country', () => {
  it('is not a business day on a weekday public holiday', () => {
    expect(isBusinessDay('2026-12-25', 'FR')).toBe(false);
    expect(isBusinessDay('2026-12-25')).toBe(true); // a Friday: without a country only weekends count
  });

  it('skips Christmas and New Year in France: Thursday 24 Dec + 1 is Monday 28 Dec', () => {
    expect(addBusinessDays('2026-12-24', 1, 'FR')).toBe('2026-12-28');
    expect(addBusinessDays('2026-12-31', 1, 'FR')).toBe('2027-01-04');
  });

  it('counts Christmas week in Germany: 5 business days from 23 Dec 2026 end on 31 Dec', () => {
    // 24, 28, 29, 30, 31 December: the 25th is a Friday holiday, the 26th a Saturday holiday.
    expect(addBusinessDays('2026-12-23', 5, 'DE')).toBe('2026-12-31');
    expect(addBusinessDays('2026-12-23', 5)).toBe('2026-12-30');
  });

  it('skips the substitute Boxing Day in Great Britain', () => {
    expect(nextBusinessDay('2026-12-24', 'GB')).toBe('2026-12-29');
  });

  it('skips Thanksgiving in the United States', () => {
    expect(addBusinessDays('2026-11-25', 1, 'US')).toBe('2026-11-27');
    expect(businessDayOnOrAfter('2026-11-26', 'US')).toBe('2026-11-27');
  });

  it('leaves the same dates alone in a country without that holiday', () => {
    expect(addBusinessDays('2026-11-25', 1, 'FR')).toBe('2026-11-26');
  });

  it('keeps businessDaysBetween the inverse of addBusinessDays across holidays', () => {
    for (const n of [0, 1, 3, 5, 8, 15]) {
      expect(businessDaysBetween('2026-12-21', addBusinessDays('2026-12-21', n, 'DE'), 'DE')).toBe(n);
    }
  });

  it('counts no business days over a holiday weekend', () => {
    expect(businessDaysBetween('2026-12-24', '2026-12-27', 'DE')).toBe(0);
  });
});
