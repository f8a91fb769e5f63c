// The erasure object of the HTTP API (docs/http-contract.md "Erasure"): what
// DELETE /v1/dispatches/{id} answers and GET /v1/erasures/{id} reads. Nothing about the dispatch
// beyond its id. The OpenAPI document is generated from these schemas (api/openapi-erasures.ts).
import { z } from 'zod';
import { isoTimestamp, uuidV4 } from './field-schemas.js';

export const erasureId = z
  .string()
  .regex(/^er_[0-9A-Za-z]{16}$/, 'must be an erasure id (er_ and 16 letters or digits)')
  .meta({ description: 'erasure id', example: 'er_4kR9wQ2mZp7TxA1c' });

export const ERASURE_STATUSES = ['pending', 'completed', 'failed'] as const;

/** DELETE /v1/dispatches/{id}'s answer: the erasure just requested (or the one requested before). */
export const erasureRequested = z
  .object({
    id: erasureId,
    dispatch_id: uuidV4,
    status: z.enum(ERASURE_STATUSES).meta({ description: '`pending` until every row and workflow run is gone' }),
    requested_at: isoTimestamp,
  })
  .meta({ id: 'ErasureRequested' });

/** GET /v1/erasures/{id}. */
export const erasureRecord = erasureRequested
  .extend({
    completed_at: isoTimestamp.nullable().meta({ description: 'when the last row naming the dispatch was removed; null until then' }),
    removed: z.object({
      rows: z.number().int().min(0).meta({ description: 'database rows removed' }),
      workflow_runs: z
        .number()
        .int()
        .min(0)
        .meta({ description: 'Temporal workflow runs deleted (continue-as-new and restarts make several)' }),
    }),
  })
  .meta({ id: 'Erasure' });
