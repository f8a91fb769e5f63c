// Card Delivery Status Service — webhook consumer kit. Verify first (on the raw body bytes), then
// parse, then dedupe, then apply with the latest-state rule; answer 2xx within 5 s and do slow work
// afterwards. See ../README.md.
export { verify, verifyStandard, verifyRequest, hexSignature, DEFAULT_TOLERANCE_SECONDS } from './verify.js';
export type { RawBody, Secrets, StandardResult, VerifyRequestResult } from './verify.js';
export { parse, shouldPromptActivation, statusRecord, webhookEnvelope, WebhookParseError } from './parse.js';
export type { CardWebhookEnvelope, EndpointDisabledEnvelope, StatusRecord, WebhookEnvelope } from './parse.js';
export { createDeduper, dedupeKey } from './dedupe.js';
export type { Deduper } from './dedupe.js';
export { createLatestStateStore, isNewer } from './latest-state.js';
export type { LatestState, LatestStateStore } from './latest-state.js';
export { diagnose } from './diagnose.js';
export type { Diagnosis, ProblemCode } from './diagnose.js';
export { header, type HeaderSource } from './headers.js';
