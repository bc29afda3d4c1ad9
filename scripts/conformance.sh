#!/usr/bin/env bash
# Runs the conformance suite (bin/strata conformance) against a real
# `strata serve` process started from the built binary on a fresh data dir,
# signing in with the demo account it creates. Called by `make conformance`.
set -euo pipefail
cd "$(dirname "$0")/.."

data=$(mktemp -d)
./bin/strata serve --demo --addr 127.0.0.1:0 --data-dir "$data" --log-format json >"$data/stdout" 2>"$data/server.log" &
pid=$!
cleanup() {
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT

for _ in $(seq 1 300); do
  grep -q 'Then call the API' "$data/stdout" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { echo "strata serve exited:"; cat "$data/server.log"; exit 1; }
  sleep 0.1
done
base=$(sed -n 's/.*serving on \(http:\/\/[^ ]*\).*/\1/p' "$data/stdout" | head -n 1)
field() { sed -n "s/.*\"$1\": *\"\([^\"]*\)\".*/\1/p" "$data/demo-credentials.json"; }
[[ -n $base ]] || { echo "no address in the server's output:"; cat "$data/stdout"; exit 1; }

status=0
./bin/strata conformance --base-url "$base" --email "$(field email)" --password "$(field password)" \
  ${JUNIT:+--junit "$JUNIT"} || status=$?
if ((status != 0)); then
  echo "--- server log (last 40 lines) ---"
  tail -n 40 "$data/server.log"
fi
exit "$status"
