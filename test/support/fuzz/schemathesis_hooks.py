# Schemathesis hooks for test/api/fuzz.test.ts (loaded through SCHEMATHESIS_HOOKS).
#
# `positive_data_acceptance` fails any schema-valid request answered 4xx other than 401/403/404. The
# document states every rule the server enforces, except those JSON Schema cannot express, which it
# states in the field's description (docs/design.md "What the service promises about its inputs" time bounds: they depend on the clock and on the
# dispatch; the order of created_after and created_before; a cursor is valid only when the API made
# it). This check is that one, except for a 400 whose message names one of those rules.
#
# `negative_data_rejection` fails any schema-invalid request answered 2xx. A batch whose envelope is
# valid is answered 200 with one result per item, an invalid item reported in its own result (the
# document says so): such a batch passes when at least one item is reported `bad_request`.
#
# A schema-valid batch is cut to its first 25 items: a batch of 1,000 registrations takes longer
# than a request may wait here (registration runs at ~30-60/s on a 2-core machine);
# test/api/batch.test.ts covers full batches.
import schemathesis
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

RULES_STATED_IN_DESCRIPTIONS = (
    "dispatch_date: must lie within",
    "occurred_at: must lie within",
    # A carrier event's reason belongs to an exception (the reason's description says so).
    "reason: only an exception takes a reason",
    "created_before: must be later than created_after",
    "cursor: not a cursor this API returned",
    # Webhook endpoints and replays (docs/webhooks.md "Webhook endpoints"): the URL's SSRF check
    # resolves the host; reserved custom header names; a replay range's order; a test event's type.
    "url: cannot receive webhooks",
    "headers",
    "until: must be later than since",
    "type: this endpoint is not subscribed",
    # Tracking links and the page's branding (docs/tracking-page.md "Tracking links and the tracking
    # page"): the expiry's bounds depend on the clock; a colour's contrast and a URL's host are not
    # JSON Schema.
    "expires_at: must be in the future",
    "accent_color: must reach a contrast",
    "activation_url: must be an https URL",
    "support_url: must be an https URL",
    # Tracking feeds (docs/tracking-feeds.md): a Shippo feed has no secret to set, and a Ship24
    # feed's secret is visible ASCII (the secret's description says both).
    "secret: shippo feeds",
    "secret: must be visible ASCII",
)
# 409s a schema-valid request may get, as the descriptions say: the per-issuer endpoint cap, and a
# test event or replay for a disabled endpoint.
CONFLICTS_STATED_IN_DESCRIPTIONS = ("limit reached", "this endpoint is disabled")
BATCH_ITEMS_SENT = 25


def _message(response):
    try:
        body = response.json()
    except Exception:
        return ""
    return body.get("message", "") if isinstance(body, dict) else ""


@schemathesis.check
def positive_data_acceptance_beyond_json_schema(ctx, response, case):
    if response.status_code == 400 and _message(response).startswith(RULES_STATED_IN_DESCRIPTIONS):
        return None
    if response.status_code == 409 and _message(response).startswith(CONFLICTS_STATED_IN_DESCRIPTIONS):
        return None
    return positive_data_acceptance(ctx, response, case)


@schemathesis.check
def negative_data_rejection_item_by_item(ctx, response, case):
    if response.status_code == 200 and _is_batch(case):
        results = response.json().get("results", [])
        if any(r.get("result") == "error" and r.get("error", {}).get("error") == "bad_request" for r in results):
            return None
    return negative_data_rejection(ctx, response, case)


def _is_batch(case):
    return case.operation.path == "/v1/dispatches/batch"


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    # Every phase goes through here (the coverage phase does not go through map_body).
    if _is_batch(case) and case.meta is not None and case.meta.generation.mode.is_positive:
        body = case.body
        if isinstance(body, dict) and isinstance(body.get("dispatches"), list):
            body["dispatches"] = body["dispatches"][:BATCH_ITEMS_SENT]
