// `predictions quality [--since DATE] [--issuer ID]`: how good the service's own predictions turned
// out (docs/prediction-quality.md "Quality"). For every live dispatch the service saw delivered,
// whenever it was registered or reported, the window it predicted at registration against the actual
// delivery date, per confidence level: how many, the share delivered inside the window (coverage,
// with its 95 % interval) beside the level's target (High 97 %, Medium 92 %, Low 85 %) and whether
// it is met, and the median window width in business days of the destination country; then how
// many of those deliveries the model did not learn from, and why. The figures are
// domain/prediction-quality.ts's, as in the simulator's report.
import type { Command } from 'commander';
import { z } from 'zod';
import { loadRegistrationOutcomes } from '../../db/predictions.js';
import { DELIVERED_ON_RULE, notLearnedSummary, publishedShare, qualityByConfidence, targetVerdict, type ConfidenceQuality, type NotLearnedSummary } from '../../domain/prediction-quality.js'; // prettier-ignore
import { NOT_LEARNED_REASONS } from '../../domain/vocabulary.js';
import { isoDate } from '../../domain/field-schemas.js';
import { issuerExists } from '../../db/issuers.js';
import { CliError, output, parseOptions, table, withDatabase } from './context.js';

const qualityOptions = z.object({
  since: isoDate.optional(),
  issuer: z.string().trim().min(1, 'must not be empty').optional(),
});

// Shares to four decimals, percentages to one; a share below the target never prints as reaching it.
const round = (value: number | null, target: number) => (value === null ? null : publishedShare(value, target, 4));
const percent = (value: number | null, target: number) =>
  value === null ? '-' : `${(publishedShare(value, target, 3) * 100).toFixed(1)} %`;

function toJson(row: ConfidenceQuality) {
  return {
    confidence_level: row.confidence,
    dispatches: row.dispatches,
    inside: row.inside,
    early: row.early,
    late: row.late,
    coverage: round(row.coverage, row.targetCoverage),
    coverage_ci95: row.coverageInterval?.map((end) => round(end, row.targetCoverage)) ?? null,
    target_coverage: row.targetCoverage,
    median_window_days: row.medianWindowDays,
    // Added with the per-level targets (High 97 %, Medium 92 %, Low 85 %): the same target and
    // interval under flat names, and how the coverage stands against the target.
    target: row.targetCoverage,
    ci_low: round(row.coverageInterval?.[0] ?? null, row.targetCoverage),
    ci_high: round(row.coverageInterval?.[1] ?? null, row.targetCoverage),
    verdict: targetVerdict(row),
  };
}

/** The deliveries the model did not learn from, and per reason how many have it (a delivery may have several). */
function notLearnedJson(summary: NotLearnedSummary) {
  return { dispatches: summary.dispatches, ...summary.reasons };
}

function describeNotLearned(summary: NotLearnedSummary, total: number): string {
  if (summary.dispatches === 0) return `The model learned from all ${total}.`;
  const reasons = NOT_LEARNED_REASONS.filter((reason) => summary.reasons[reason] > 0).map(
    (reason) => `${reason.replaceAll('_', ' ')} ${summary.reasons[reason]}`,
  );
  return `Counted all the same, ${summary.dispatches} of them taught the model nothing (${reasons.join(', ')}).`;
}

function describe(rows: ConfidenceQuality[], total: number, since: string | undefined, notLearned: NotLearnedSummary): string {
  return [
    `Window predicted at registration vs actual delivery, ${total} delivered dispatches${since ? ` dispatched since ${since}` : ''}:`,
    table(
      ['CONFIDENCE', 'DISPATCHES', 'INSIDE', 'COVERAGE', '95% INTERVAL', 'TARGET', 'VERDICT', 'EARLY', 'LATE', 'MEDIAN WIDTH'],
      rows.map((r) => [
        r.confidence,
        String(r.dispatches),
        String(r.inside),
        percent(r.coverage, r.targetCoverage),
        r.coverageInterval
          ? `${percent(r.coverageInterval[0], r.targetCoverage)} – ${percent(r.coverageInterval[1], r.targetCoverage)}`
          : '-',
        percent(r.targetCoverage, r.targetCoverage),
        targetVerdict(r)?.replace('_', ' ') ?? '-',
        String(r.early),
        String(r.late),
        r.medianWindowDays === null ? '-' : `${r.medianWindowDays} business days`,
      ]),
    ),
    DELIVERED_ON_RULE,
    'Width: business days of the destination country in the window, both ends counted.',
    describeNotLearned(notLearned, total),
  ].join('\n');
}

export function registerPredictionCommands(program: Command): void {
  const predictions = program.command('predictions').description('how predicted delivery windows compare with actual deliveries');

  predictions
    .command('quality')
    .description('coverage and width of the windows predicted at registration, per confidence level, from delivered dispatches')
    .option('--since <date>', 'only dispatches dispatched on or after this date (YYYY-MM-DD, UTC)')
    .option('--issuer <id>', "only this issuer's dispatches (iss_…)")
    .action(async (raw: unknown, command: Command) => {
      const o = parseOptions(qualityOptions, raw);
      const outcomes = await withDatabase(async (db) => {
        // A mistyped issuer id must not read as an issuer whose cards were never delivered.
        if (o.issuer !== undefined && !(await issuerExists(db, o.issuer))) throw new CliError(`unknown issuer: ${o.issuer}`);
        return loadRegistrationOutcomes(db, { since: o.since, issuerId: o.issuer });
      });
      const rows = outcomes.length === 0 ? [] : qualityByConfidence(outcomes);
      const notLearned = notLearnedSummary(outcomes);
      output(command, { data: rows.map(toJson), dispatches: outcomes.length, not_learned: notLearnedJson(notLearned) }, () =>
        rows.length === 0
          ? `No delivered dispatches with a prediction logged at registration${o.since ? ` dispatched since ${o.since}` : ''}${o.issuer ? ` for ${o.issuer}` : ''}: nothing to compare yet.`
          : describe(rows, outcomes.length, o.since, notLearned),
      );
    });
}
