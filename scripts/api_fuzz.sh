#!/usr/bin/env bash
# Fuzz the JSON API with schemathesis against a local server (DEBUG off, no collectstatic).
#
#   scripts/api_fuzz.sh [PORT] [MAX_EXAMPLES]
#
# Bounded and local only: the server listens on 127.0.0.1, its database is a separate
# embedded PostgreSQL folder (var/fuzz-pgdata), each operation gets at most MAX_EXAMPLES
# (default 50) generated requests, NUL bytes included, and the checks are: no 5xx, and
# every status answered is documented in /api/v1/openapi.json. The rate limit is off so
# the fuzzer measures the API, not the throttle. Reports land in var/fuzz-report/.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${1:-8765}"
MAX_EXAMPLES="${2:-50}"
PYTHON="${PYTHON:-.venv/bin/python}"
[ -x "$PYTHON" ] || PYTHON="$(command -v python)"
SCHEMATHESIS="${SCHEMATHESIS:-$(dirname "$PYTHON")/schemathesis}"

export DEBUG=false API_RATE_LIMIT="" MEMORYAPP_PGDATA="${MEMORYAPP_PGDATA:-$PWD/var/fuzz-pgdata}"
export ALLOWED_HOSTS="127.0.0.1,localhost" LOG_LEVEL=WARNING
"$PYTHON" manage.py migrate --noinput >/dev/null
TOKEN="$("$PYTHON" manage.py shell -c '
from django.contrib.auth import get_user_model
from accounts.models import ApiToken, MemorySettings
from teams.models import Membership, Project, Role, Team
user, _ = get_user_model().objects.get_or_create(username="fuzz", defaults={"email": "fuzz@example.com"})
MemorySettings.objects.filter(user=user).update(memory_enabled=True)
team, _ = Team.objects.get_or_create(name="Fuzz Team")
Membership.objects.get_or_create(team=team, user=user, defaults={"role": Role.OWNER})
Project.objects.get_or_create(team=team, name="Fuzz Project")
print(ApiToken.issue(user=user, name="fuzz")[1])
' | tail -1)"

"$PYTHON" manage.py runserver "127.0.0.1:$PORT" --noreload >var/fuzz-server.log 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true' EXIT
for _ in $(seq 1 60); do
  curl -fsS "http://127.0.0.1:$PORT/api/v1/openapi.json" >/dev/null 2>&1 && break
  sleep 1
done

mkdir -p var/fuzz-report
"$SCHEMATHESIS" run "http://127.0.0.1:$PORT/api/v1/openapi.json" \
  --header "Authorization: Bearer $TOKEN" \
  --checks not_a_server_error,status_code_conformance \
  --max-examples "$MAX_EXAMPLES" \
  --generation-allow-x00 true \
  --generation-codec utf-8 \
  --generation-database none \
  --workers 1 \
  --request-timeout 30 \
  --report junit,ndjson --report-dir var/fuzz-report \
  --no-color "${@:3}"
