#!/usr/bin/env bash
# Installs the Debian packages Strata needs, with apt-get, only when one is
# missing. Idempotent; called by `make deps`, `make run` and `make test`.
# Add a package here when a capability starts to need it.
set -euo pipefail

# package name → the command that shows it is installed
declare -A packages=(
  [gcc]=gcc      # cgo (DuckDB driver)
  [git]=git      # make check compares generated code with the tree
  [nodejs]=node  # the @supabase/auth-js compatibility test
  [npm]=npm      # installs @supabase/auth-js for that test
)

missing=()
for pkg in "${!packages[@]}"; do
  command -v "${packages[$pkg]}" >/dev/null 2>&1 || missing+=("$pkg")
done
((${#missing[@]} == 0)) && exit 0

echo "deps: installing ${missing[*]}"
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
