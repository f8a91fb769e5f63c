// Prediction quality: how the windows predicted at registration for the signed-in issuer's live
// dispatches compared with their actual delivery, per confidence level, each level's target
// (High 97 %, Medium 92 %, Low 85 %) beside its measured coverage and 95 % interval, and how many
// of those deliveries the model did not learn from, and why. The figures are the operator CLI's
// `predictions quality --issuer` (db/predictions.ts, domain/prediction-quality.ts;
// docs/prediction-quality.md "Quality"), always scoped by the tenant's issuer id.
import type Router from '@koa/router';
import { loadRegistrationOutcomes } from '../../db/predictions.js';
import {
  DELIVERED_ON_RULE,
  notLearnedSummary,
  publishedShare,
  qualityByConfidence,
  targetVerdict,
} from '../../domain/prediction-quality.js';
import { NOT_LEARNED_REASONS, type NotLearnedReason } from '../../domain/vocabulary.js';
import { hitRateChart } from '../charts.js';
import type { DashboardDeps } from '../deps.js';
import { renderPage } from '../render.js';
import { tenantRoute } from '../tenancy.js';

// One decimal of a percentage, as the CLI prints it: a share below the target never reads as reaching it.
const percent = (value: number | null, target: number) =>
  value === null ? '—' : `${(publishedShare(value, target, 3) * 100).toFixed(1)} %`;
const VERDICTS = { met: 'Met', within_noise: 'Within noise', missed: 'Missed' } as const;
/** The rules of docs/predictions.md "History and its bounds", as an issuer reads them. */
const NOT_LEARNED: Record<NotLearnedReason, string> = {
  late_registration: 'registered more than 3 days after dispatch',
  late_report: 'delivery reported more than 3 days after it happened',
  delivered_before_dispatch: 'delivered before its dispatch date',
  implausible: 'implausibly slow for its country',
};

export function predictionQualityRoutes(router: Router, { pool }: DashboardDeps): void {
  router.get(
    '/prediction-quality',
    tenantRoute(async (ctx, tenant) => {
      const outcomes = await loadRegistrationOutcomes(pool, { issuerId: tenant.issuerId });
      const quality = qualityByConfidence(outcomes);
      // Measured share inside the window per level with dispatches, against its target.
      const chart = hitRateChart(
        'hit-rate-chart',
        quality.flatMap((row) =>
          row.coverage === null
            ? []
            : [
                {
                  label: row.confidence,
                  measured: publishedShare(row.coverage, row.targetCoverage, 3),
                  target: row.targetCoverage,
                  count: row.dispatches,
                },
              ],
        ),
      );
      const rows = quality.map((row) => {
        const verdict = targetVerdict(row);
        return {
          confidence: row.confidence,
          dispatches: row.dispatches,
          inside: row.inside,
          early: row.early,
          late: row.late,
          coverage: percent(row.coverage, row.targetCoverage),
          interval: row.coverageInterval
            ? `${percent(row.coverageInterval[0], row.targetCoverage)} – ${percent(row.coverageInterval[1], row.targetCoverage)}`
            : '—',
          target: percent(row.targetCoverage, row.targetCoverage),
          verdict: verdict ? VERDICTS[verdict] : '—',
          width: row.medianWindowDays === null ? '—' : String(row.medianWindowDays),
        };
      });
      const notLearned = notLearnedSummary(outcomes);
      const reasons = NOT_LEARNED_REASONS.filter((reason) => notLearned.reasons[reason] > 0).map((reason) => ({
        label: NOT_LEARNED[reason],
        count: notLearned.reasons[reason],
      }));
      renderPage(ctx, 'prediction-quality', {
        title: 'Prediction quality',
        deliveredOnRule: DELIVERED_ON_RULE,
        total: outcomes.length,
        rows,
        chart,
        notLearned: notLearned.dispatches,
        reasons,
      });
    }),
  );
}
