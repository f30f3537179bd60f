#!/usr/bin/env bash
# Runs once, on the first start of an empty Postgres data volume (the official
# image executes /docker-entrypoint-initdb.d/*.sh). Creates one login role and one
# database per service, each owning its own, so neither service can read the
# other's data. Passwords come from the environment: <NAME>_DB_PASSWORD.
#   SERVICE_DATABASES   space-separated service names (default: "payment gateway")
# Re-running it is harmless: existing roles get their password reset, existing
# databases are left alone.
set -euo pipefail

for name in ${SERVICE_DATABASES:-payment gateway}; do
  if [[ ! $name =~ ^[a-z][a-z0-9_]*$ ]]; then
    echo "init-databases: invalid service name '$name'" >&2
    exit 1
  fi
  password_var="${name^^}_DB_PASSWORD"
  password="${!password_var:-}"
  if [[ -z $password ]]; then
    echo "init-databases: $password_var is not set" >&2
    exit 1
  fi
  # psql variables (:"name", :'password') quote identifiers and literals, so a
  # password never needs escaping here and never becomes SQL.
  psql -v ON_ERROR_STOP=1 --no-psqlrc --username "${POSTGRES_USER:-postgres}" --dbname "${POSTGRES_DB:-postgres}" \
    -v name="$name" -v password="$password" <<'SQL'
SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'name') AS role_exists \gset
\if :role_exists
  ALTER ROLE :"name" WITH LOGIN PASSWORD :'password';
\else
  CREATE ROLE :"name" WITH LOGIN PASSWORD :'password';
\endif
SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'name') AS db_exists \gset
\if :db_exists
\else
  CREATE DATABASE :"name" OWNER :"name";
\endif
REVOKE ALL ON DATABASE :"name" FROM PUBLIC;
SQL
  echo "init-databases: database '$name' owned by role '$name' is ready"
done
