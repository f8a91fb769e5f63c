// Prediction quality: how the windows predicted at registration for the signed-in issuer's live
// dispatches compared with their actual delivery, per confidence level, each level's target
// (High 97 %, Medium 92 %, Low 85 %) beside its measured coverage and 95 % interval. The figures
// are the operator CLI's `predictions quality --issuer` (db/predictions.ts, domain/prediction-quality.ts;
// docs/prediction-quality.md "Quality"), always scoped by the tenant's issuer id.
import type Router from '@koa/router';
import { loadRegistrationOutcomes } from '../../db/predictions.js';
import { qualityByConfidence, targetVerdict } from '../../domain/prediction-quality.js';
import { hitRateChart } from '../charts.js';
import type { DashboardDeps } from '../deps.js';
import { renderPage } from '../render.js';
import { tenantRoute } from '../tenancy.js';

const percent = (value: number | null) => (value === null ? '—' : `${(value * 100).toFixed(1)} %`);
const VERDICTS = { met: 'Met', within_noise: 'Within noise', missed: 'Missed' } as const;

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
            : [{ label: row.confidence, measured: row.coverage, target: row.targetCoverage, count: row.dispatches }],
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
          coverage: percent(row.coverage),
          interval: row.coverageInterval ? `${percent(row.coverageInterval[0])} – ${percent(row.coverageInterval[1])}` : '—',
          target: percent(row.targetCoverage),
          verdict: verdict ? VERDICTS[verdict] : '—',
          width: row.medianWindowDays === null ? '—' : String(row.medianWindowDays),
        };
      });
      renderPage(ctx, 'prediction-quality', { title: 'Prediction quality', total: outcomes.length, rows, chart });
    }),
  );
}
