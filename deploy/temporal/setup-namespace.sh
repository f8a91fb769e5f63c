#!/bin/sh
# One-shot (docker-compose `temporal-setup`, temporalio/admin-tools image), once the server answers:
# the namespace the service uses and the Keyword search attributes the dispatch workflow upserts
# (docs/design.md "Shape of the system"). The api and worker start only after it succeeded: a workflow that upserts an
# unregistered search attribute fails. Safe to repeat.
set -eu

NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
export TEMPORAL_ADDRESS="${TEMPORAL_ADDRESS:-temporal:7233}"

# Retries a command for up to a minute: a new namespace takes a few seconds to be visible everywhere.
retry() {
  attempt=1
  until "$@"; do
    if [ "$attempt" -ge 30 ]; then
      echo "gave up after $attempt attempts: $*" >&2
      return 1
    fi
    attempt=$((attempt + 1))
    sleep 2
  done
}

has_search_attribute() {
  temporal operator search-attribute list --namespace "$NAMESPACE" | grep -qw "$1"
}

create_search_attribute() {
  has_search_attribute "$1" || temporal operator search-attribute create --namespace "$NAMESPACE" --name "$1" --type Keyword
}

retry temporal operator cluster health
if ! temporal operator namespace describe --namespace "$NAMESPACE" >/dev/null 2>&1; then
  # 30 days: how long the history of a closed dispatch workflow stays inspectable.
  temporal operator namespace create --namespace "$NAMESPACE" --retention 720h
fi
for name in DispatchStatus IssuerId CountryCode; do
  retry create_search_attribute "$name"
done
echo "namespace $NAMESPACE is ready with search attributes DispatchStatus, IssuerId, CountryCode"
