#!/bin/sh
# One-shot (docker-compose `temporal-schema`, temporalio/admin-tools image): creates Temporal's two
# databases on the compose Postgres and brings their schemas up to the version of this image, before
# the server starts. Every step may be repeated (a restart on an existing volume): setup-schema
# keeps a newer version and update-schema applies only the missing versions.
set -eu

export SQL_PASSWORD="${POSTGRES_PWD}"
sql() {
  temporal-sql-tool --plugin postgres12 --ep "${POSTGRES_SEEDS}" -p "${DB_PORT:-5432}" -u "${POSTGRES_USER}" "$@"
}

for db in temporal temporal_visibility; do
  # `create` fails when the database already exists; any real problem (credentials, network)
  # makes the setup-schema that follows fail loudly.
  sql --db "$db" create 2>/dev/null || echo "database $db already exists"
  sql --db "$db" setup-schema -v 0.0
done
sql --db temporal update-schema -d /etc/temporal/schema/postgresql/v12/temporal/versioned
sql --db temporal_visibility update-schema -d /etc/temporal/schema/postgresql/v12/visibility/versioned
echo "Temporal schemas are up to date"
