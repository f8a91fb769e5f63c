// National public holidays of a destination country, so transit is counted in that country's
// business days (docs/predictions.md). The rules come from `date-holidays` (maintained rules
// for about 200 countries, bundled with the package: no network, no clock).
//
// Only holidays of type 'public' for the whole country count: regional ones (a German Land, a
// Swiss canton) and 'bank', 'school', 'optional' or 'observance' days do not stop the national
// post. Substitute days (GB Boxing Day on a Saturday → Monday) are public holidays too.
//
// Cost: the package's data is parsed once when this module loads; a country's rules are compiled
// on first use, and each country + year is computed once and kept as a set of dates, so a lookup
// after that is a Set.has. A country the library does not know has no holidays (weekends only).
import Holidays from 'date-holidays';

const ALPHA_2 = /^[A-Za-z]{2}$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const MS_PER_HOUR = 3_600_000;

/** Compiled rules per country (a country the library does not know yields no holidays). */
const rulesByCountry = new Map<string, Holidays>();
/** Public holiday dates ('YYYY-MM-DD') of holidays that start in a year, per `CC:YYYY`. */
const datesByCountryYear = new Map<string, ReadonlySet<string>>();

function rulesFor(country: string): Holidays {
  let rules = rulesByCountry.get(country);
  if (!rules) {
    rules = new Holidays(country);
    rulesByCountry.set(country, rules);
  }
  return rules;
}

/**
 * The dates of the national public holidays that start in `year`. A holiday lasting several days
 * (Eid in some countries, New Year in Armenia) contributes each of its days, which may spill into
 * the next year.
 */
export function publicHolidayDates(countryCode: string, year: number): ReadonlySet<string> {
  const country = normalizeCountry(countryCode);
  const key = `${country}:${year}`;
  let dates = datesByCountryYear.get(key);
  if (!dates) {
    const found = new Set<string>();
    for (const holiday of rulesFor(country).getHolidays(year)) {
      if (holiday.type !== 'public') continue;
      // `date` is the local start ('2026-12-25 00:00:00', or '2026-03-20 00:00:00 -0600' for one
      // that begins at the previous sunset): the calendar day is its first ten characters.
      const days = Math.max(1, Math.round((holiday.end.getTime() - holiday.start.getTime()) / (24 * MS_PER_HOUR)));
      const first = Date.UTC(Number(holiday.date.slice(0, 4)), Number(holiday.date.slice(5, 7)) - 1, Number(holiday.date.slice(8, 10)));
      for (let day = 0; day < days; day += 1) found.add(new Date(first + day * 24 * MS_PER_HOUR).toISOString().slice(0, 10));
    }
    dates = found;
    datesByCountryYear.set(key, dates);
  }
  return dates;
}

/** True when `date` ('YYYY-MM-DD') is a national public holiday in the country (ISO alpha-2). */
export function isPublicHoliday(countryCode: string, date: string): boolean {
  if (!ISO_DATE.test(date)) throw new RangeError(`not a YYYY-MM-DD date: ${date}`);
  const year = Number(date.slice(0, 4));
  // A several-day holiday that starts late in December can cover the first days of January.
  return publicHolidayDates(countryCode, year).has(date) || publicHolidayDates(countryCode, year - 1).has(date);
}

function normalizeCountry(countryCode: string): string {
  // A state or region ('DE-BY') would silently switch to regional rules: only a country is accepted.
  if (!ALPHA_2.test(countryCode)) throw new RangeError(`not an ISO 3166-1 alpha-2 country code: ${countryCode}`);
  return countryCode.toUpperCase();
}
