// The custom search attributes operators filter dispatches by in the Temporal UI (docs/design.md).
// They must be registered on the server before a workflow upserts them: `npm start`, the tests and
// docker-compose register exactly this list. Part of the Temporal contract: bundled into workflows.
import { defineSearchAttributeKey } from '@temporalio/common';

export const DISPATCH_STATUS = defineSearchAttributeKey('DispatchStatus', 'KEYWORD');
export const ISSUER_ID = defineSearchAttributeKey('IssuerId', 'KEYWORD');
export const COUNTRY_CODE = defineSearchAttributeKey('CountryCode', 'KEYWORD');

/** name → type, in the form `temporal server start-dev --search-attribute` and the test environment take. */
export const SEARCH_ATTRIBUTES = { DispatchStatus: 'Keyword', IssuerId: 'Keyword', CountryCode: 'Keyword' } as const;
