// The oracle of a family network (family.ts): each area's true transit distribution for a card
// dispatched today, before or after the carrier's cut-off, by simulation (family.ts drawTransit, the
// same draws the network makes, 20,000 of them with their own PRNG), and the narrowest window
// holding a coverage under it: the best any model could do, which the report sets each level's
// median width beside (README.md "Reading the figures").
import { shortestInterval } from '../../domain/statistics.js';
import { drawTransit, type FamilyArea, type FamilyDelivery, type FamilyNetwork } from './family.js';
import { prng } from './network.js';

const DRAWS = 20_000;

export interface FamilyOracle {
  /** Width in business days (both ends) of the narrowest window holding `coverage` of the card's true distribution. */
  width(card: FamilyDelivery, coverage: number): number;
}

export function familyOracle(network: FamilyNetwork, seed: number): FamilyOracle {
  const cache = new Map<string, number[]>();
  const distribution = (area: FamilyArea, hour: number) => {
    const late = network.cutoffHour !== null && hour >= network.cutoffHour;
    const key = `${area.countryCode}:${area.postalCode}:${late}`;
    let h = cache.get(key);
    if (!h) {
      const random = prng(seed * 104_729 + cache.size);
      h = [];
      for (let i = 0; i < DRAWS; i += 1) {
        const days = drawTransit(area, 0, hour, network.cutoffHour, random);
        while (h.length <= days) h.push(0);
        h[days] += 1;
      }
      cache.set(key, h);
    }
    return h;
  };
  return {
    width(card, coverage) {
      const [lo, hi] = shortestInterval(distribution(card.area, card.hour), coverage);
      return hi - lo + 1;
    },
  };
}
