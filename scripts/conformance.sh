#!/usr/bin/env bash
# Runs the conformance suite (bin/strata conformance) against a real
# `strata serve` process started from the built binary on a fresh data dir,
# signing in with the demo account it creates. Called by `make conformance`,
# which builds bin/strata, bin/plugins and bin/postgrest-fixture and starts
# the test PostgreSQL first.
#
# The sync check pulls bin/postgrest-fixture: a PostgREST-protocol test
# double serving two seeded tables of a fresh schema of the test PostgreSQL
# ($STRATA_TEST_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/test).
# The server runs with short token lifetimes so that the expiry checks see
# tokens expire within --max-expiry-wait; the suite is told the same values.
set -euo pipefail
cd "$(dirname "$0")/.."

access_ttl=5s    # the server's and the suite's --access-token-ttl
refresh_ttl=15s  # must outlast access_ttl + leeway: the access-expiry check refreshes after that
leeway=5s

data=$(mktemp -d)
schema="pgrst_conformance_$$_${RANDOM}"
pid="" fixture_pid=""
cleanup() {
  [[ -z $pid ]] || kill -TERM "$pid" 2>/dev/null || true
  [[ -z $fixture_pid ]] || kill -TERM "$fixture_pid" 2>/dev/null || true # it drops its schema on the way out
  [[ -z $pid ]] || wait "$pid" 2>/dev/null || true
  [[ -z $fixture_pid ]] || wait "$fixture_pid" 2>/dev/null || true
  # Should the fixture have died without dropping it, drop the schema here.
  ./bin/postgrest-fixture --drop --schema "$schema" 2>/dev/null || echo "conformance: could not drop schema $schema"
  rm -rf "$data"
}
trap cleanup EXIT

./bin/postgrest-fixture --schema "$schema" >"$data/fixture.out" 2>"$data/fixture.log" &
fixture_pid=$!
./bin/strata serve --demo --addr 127.0.0.1:0 --data-dir "$data" --log-format json \
  --access-token-ttl "$access_ttl" --refresh-token-ttl "$refresh_ttl" --token-leeway "$leeway" \
  >"$data/stdout" 2>"$data/server.log" &
pid=$!

for _ in $(seq 1 300); do
  grep -q '^schema=' "$data/fixture.out" 2>/dev/null && break
  kill -0 "$fixture_pid" 2>/dev/null || { echo "postgrest-fixture exited:"; cat "$data/fixture.log"; exit 1; }
  sleep 0.1
done
backend=$(sed -n 's/^url=//p' "$data/fixture.out")
key=$(sed -n 's/^key=//p' "$data/fixture.out")
[[ -n $backend && -n $key ]] || { echo "postgrest-fixture printed no address:"; cat "$data/fixture.out" "$data/fixture.log"; exit 1; }

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
  --hosted-backend-url "$backend" --service-role-key "$key" \
  --access-token-ttl "$access_ttl" --refresh-token-ttl "$refresh_ttl" --token-leeway "$leeway" \
  ${JUNIT:+--junit "$JUNIT"} || status=$?
if ((status != 0)); then
  echo "--- server log (last 40 lines) ---"
  tail -n 40 "$data/server.log"
  echo "--- postgrest-fixture log ---"
  tail -n 20 "$data/fixture.log"
fi
exit "$status"
