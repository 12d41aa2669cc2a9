#!/bin/sh
# Runs once, as the database's owner, when the server's volume is created: the role the bank serves as.
# It may log in but owns nothing and is no superuser; migration 0003 gives it its grants (full use of
# the working tables, only SELECT and INSERT on the audit log), so it cannot switch the append-only
# triggers off or rewrite the log. On a server set up by hand, run the same statement.
set -eu
psql -v ON_ERROR_STOP=1 -v pw="$AGENTBANK_APP_PASSWORD" --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<'SQL'
CREATE ROLE agentbank_app LOGIN PASSWORD :'pw' NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT;
SQL
