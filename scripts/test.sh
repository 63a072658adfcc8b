#!/usr/bin/env bash
# Set up what a fresh machine lacks, then run lint, types and the whole test suite.
#   bash scripts/test.sh [pytest args...]
# Installs Debian's chromium (browser tests), postgresql (multi-node tests), nginx (the reverse
# proxy test) and gcc (the slow disk of tests/faults, an fsync shim) when missing,
# creates .venv with the package and its dev extra, and runs ruff, mypy --strict and pytest; then
# the TypeScript client's Node tests (npm ci, npm run build, npm test in clients/typescript: local
# installs only, which need Node 20 and npm).
# The tests start their own servers (uvicorn hosts, a PostgreSQL cluster and an nginx in temp
# folders); no system service is started or configured.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each pytest worker would otherwise compile the package and rewrite every test module again.
unset PYTHONDONTWRITEBYTECODE

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# CJK glyphs for the pages' screenshots in Korean, Chinese and Japanese (tests/host/web).
fc-list :lang=ja 2>/dev/null | grep -q . || missing+=(fonts-noto-cjk)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "== installing Debian packages: ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

python=${PYTHON:-python3.11}
command -v "$python" >/dev/null 2>&1 || python=python3
[ -x .venv/bin/python ] || "$python" -m venv .venv
echo "== installing user-questions[dev] into .venv"
.venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -m pip install -q -e '.[dev]' 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -c "import user_questions, starlette, mcp, psycopg, playwright, pexpect, trustme" \
  || { echo "the dev install is incomplete" >&2; exit 1; }

echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy --strict"
.venv/bin/mypy
echo "== pytest"
.venv/bin/pytest "$@"
echo "== TypeScript client: npm ci, npm run build, npm test (clients/typescript)"
command -v npm >/dev/null 2>&1 && node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' \
  || { echo "the TypeScript client's tests need Node 20 (or later) and npm" >&2; exit 1; }
(cd clients/typescript && npm ci --no-audit --no-fund && npm run build && npm test)
