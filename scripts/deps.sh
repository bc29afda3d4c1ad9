#!/usr/bin/env bash
# Installs the Debian packages Strata needs, with apt-get, only when one is
# missing. Idempotent; called by `make deps`, `make run` and `make test`.
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
)

missing=()
for pkg in "${!packages[@]}"; do
  check=${packages[$pkg]}
  if [[ $check == /* ]]; then
    [[ -e $check ]] || missing+=("$pkg")
  else
    command -v "$check" >/dev/null 2>&1 || missing+=("$pkg")
  fi
done
((${#missing[@]} == 0)) && exit 0

echo "deps: installing ${missing[*]}"
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
