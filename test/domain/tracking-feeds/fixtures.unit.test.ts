// The tracking-feed fixtures read as their providers' modules read them (domain/tracking-feeds/):
// each is a long history (≥ 50 checkpoints, several days, out of order, one sent twice, times with
// and without offsets) and ends where FIXTURE_FACTS (test/fixtures/tracking-feeds/load.ts) says, the
// facts the service's integration tests rely on. Event ids are stable (the same across two parses)
// and distinct but for the one repeated checkpoint.
import { describe, expect, it } from '@jest/globals';
import { FEED_PROVIDER_MODULES, resolveCheckpointTime, type ProviderCheckpoint } from '../../../domain/tracking-feeds/index.js';
import { applyCarrierEvent, initialState } from '../../../domain/state-machine.js';
import { FIXTURES, FIXTURE_FACTS, fixtureBody, type FixtureName } from '../../fixtures/tracking-feeds/load.js';

function checkpointsOf(name: FixtureName): ProviderCheckpoint[] {
  const parsed = FEED_PROVIDER_MODULES[FIXTURE_FACTS[name].provider].parse(fixtureBody(name));
  if (!parsed.ok) throw new Error(`${name}: ${parsed.message}`);
  expect(parsed.trackings).toHaveLength(1);
  return parsed.trackings[0].checkpoints;
}

const distinctById = (checkpoints: ProviderCheckpoint[]) => [...new Map(checkpoints.map((c) => [c.eventId, c])).values()];

describe.each(FIXTURES)('fixture %s', (name) => {
  const facts = FIXTURE_FACTS[name];
  const checkpoints = checkpointsOf(name);
  const distinct = distinctById(checkpoints);
  const instants = (list: ProviderCheckpoint[]) => list.map((c) => resolveCheckpointTime(c.time!, facts.destinationCountry));

  it('is a long history: at least 50 checkpoints over several days', () => {
    expect(checkpoints).toHaveLength(facts.entries);
    expect(distinct.length).toBeGreaterThanOrEqual(50);
    const times = instants(distinct).map(Date.parse);
    expect((Math.max(...times) - Math.min(...times)) / 86_400_000).toBeGreaterThan(3);
  });

  it('has every checkpoint but one under a distinct event id, and the repeated one under the same id', () => {
    expect(distinct).toHaveLength(facts.distinct);
    expect(checkpoints.length - distinct.length).toBe(1);
    const counts = new Map<string, number>();
    for (const c of checkpoints) counts.set(c.eventId, (counts.get(c.eventId) ?? 0) + 1);
    expect([...counts.values()].filter((n) => n === 2)).toHaveLength(1);
  });

  it('gives the same event ids when parsed again', () => {
    expect(checkpointsOf(name).map((c) => c.eventId)).toEqual(checkpoints.map((c) => c.eventId));
  });

  it('is out of order', () => {
    const times = instants(checkpoints);
    expect(times).not.toEqual([...times].sort());
    expect(times).not.toEqual([...times].sort().reverse());
  });

  it('has times with and without offsets', () => {
    const originals = distinct.map((c) => c.time!.original);
    expect(originals.some((t) => /(Z|[+-]\d{2}:?\d{2})$/.test(t))).toBe(true);
    expect(originals.some((t) => !/(Z|[+-]\d{2}:?\d{2})$/.test(t))).toBe(true);
  });

  it('ignores the checkpoints that say nothing about where the card is, and reads the others', () => {
    expect(distinct.filter((c) => c.mapped === null)).toHaveLength(facts.ignored);
    expect(distinct.filter((c) => c.time?.kind === 'local' && !c.time.countryCode)).toHaveLength(facts.needsFallbackCountry);
  });

  it(`ends in ${facts.finalStatus}${facts.finalReason ? ` (${facts.finalReason})` : ''}, with the changes FIXTURE_FACTS counts in either order`, () => {
    const events = distinct
      .filter((c) => c.mapped)
      .map((c) => ({
        event_id: c.eventId,
        status: c.mapped!.status,
        ...(c.mapped!.reason ? { reason: c.mapped!.reason } : {}),
        occurred_at: resolveCheckpointTime(c.time!, facts.destinationCountry),
      }));
    const dispatchDate = events
      .map((e) => e.occurred_at)
      .sort()[0]
      .slice(0, 10);
    const run = (list: typeof events) => {
      let state = initialState(dispatchDate);
      let changes = 0;
      for (const event of list) {
        const step = applyCarrierEvent(state, event as Parameters<typeof applyCarrierEvent>[1]);
        if (step.effect === 'applied' || step.effect === 'exception_repeated') changes += 1;
        state = step.state;
      }
      return { state, changes };
    };
    const inBodyOrder = run(events);
    const inTimeOrder = run([...events].sort((a, b) => a.occurred_at.localeCompare(b.occurred_at)));
    for (const { state } of [inBodyOrder, inTimeOrder]) {
      expect(state.status).toBe(facts.finalStatus);
      expect(state.exceptionReason).toBe(facts.finalReason);
    }
    expect({ bodyOrder: inBodyOrder.changes, timeOrder: inTimeOrder.changes }).toEqual(facts.changes);
  });
});
