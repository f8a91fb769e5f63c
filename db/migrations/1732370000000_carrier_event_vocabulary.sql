-- Up Migration
-- Carrier vocabularies (docs/carrier-events.md "Carrier vocabularies"): an event sent in EasyPost's or
-- Stripe Issuing's vocabulary is stored with the service's status and reason it maps to (what the
-- workflow acted on) and, here, the vocabulary and the status exactly as the carrier sent them.
-- Both NULL for the service's own vocabulary.
ALTER TABLE carrier_events ADD COLUMN vocabulary text, ADD COLUMN vocabulary_status text;

-- Down Migration
ALTER TABLE carrier_events DROP COLUMN vocabulary, DROP COLUMN vocabulary_status;
