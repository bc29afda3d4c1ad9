#!/usr/bin/env bash
# Installs the Debian packages Strata needs, with apt-get, only when one is
# missing. Idempotent; called by `make deps`, `make run` and `make test`.
# Add a package here when a capability starts to need it.
set -euo pipefail

# package name → a command or file that shows it is installed
declare -A packages=(
  [gcc]=/usr/bin/gcc   # cgo (DuckDB driver)
  [git]=/usr/bin/git   # make check compares generated code with the tree
)

missing=()
for pkg in "${!packages[@]}"; do
  [[ -e ${packages[$pkg]} ]] || missing+=("$pkg")
done
((${#missing[@]} == 0)) && exit 0

echo "deps: installing ${missing[*]}"
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
