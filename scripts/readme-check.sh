#!/usr/bin/env bash
# readme-check: runs every command of README.md as printed, on a fresh clone.
#
# It clones the checkout's committed HEAD into a temporary directory (so
# uncommitted work is NOT tested: commit first), puts a `shared` symlink
# beside the clone pointing at the real ../shared, as CI has it, installs
# evalflow into a temporary GOBIN put first on PATH (`evalflow` in the
# README is that binary; the Go build cache is reused), then runs from the
# clone's root, in order:
#   - the indented commands at the top of README.md, and
#   - every command of its ```sh code blocks (backslash continuations
#     joined; comment lines skipped),
# each in its own bash, stopping at the first that fails and showing it.
# A command's trailing comment may say what it expects:
#   # exit N          it must exit N instead of 0 (a failed quality gate);
#   # needs VAR       skipped, saying so, when the environment variable VAR
#                     (an API key) is unset or empty;
#   # needs URL       skipped, saying so, when nothing answers at URL.
# Usage: scripts/readme-check.sh [--skip-make-test]
#   --skip-make-test  do not run the README's `make test` (CI ran it just
#                     before on the same commit).
# Environment: EVALFLOW_CACHE_DIR is set to a temporary directory.
set -euo pipefail

skip_make_test=
for a in "$@"; do
  case "$a" in
    --skip-make-test) skip_make_test=1 ;;
    *) echo "readme-check: unknown argument $a" >&2; exit 2 ;;
  esac
done

repo="$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/readme-check.XXXXXX")"
cleanup() { chmod -R u+w "$tmp" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

start=$SECONDS
echo "readme-check: cloning $(git -C "$repo" rev-parse --short HEAD) (committed HEAD only; uncommitted changes are not tested) into $tmp/evalflow"
git clone -q "$repo" "$tmp/evalflow"
if [ -d "$repo/../shared" ]; then
  ln -s "$(cd "$repo/../shared" && pwd)" "$tmp/shared"
else
  echo "readme-check: $repo/../shared is missing; commands reading ../shared/data will fail" >&2
fi

export GOBIN="$tmp/bin" EVALFLOW_CACHE_DIR="$tmp/cache"
export PATH="$GOBIN:$PATH"
cd "$tmp/evalflow"
echo "readme-check: go install ./cmd/evalflow (into $GOBIN)"
go install ./cmd/evalflow

# The commands, one per line: the top block's indented lines (up to the
# first unindented text after the title), then each ```sh block's lines.
mapfile -t commands < <(awk '
  function emit(line) {
    if (cont != "") { line = cont " " line; cont = "" }
    if (line ~ /\\[ \t]*$/) { sub(/\\[ \t]*$/, "", line); cont = line; return }
    if (line ~ /^[ \t]*$/ || line ~ /^[ \t]*#/) return
    print line
  }
  NR == 1 { top = 1; next }
  top && /^    / { emit(substr($0, 5)); next }
  top && /^[ \t]*$/ { next }
  top { top = 0 }
  /^```sh[ \t]*$/ { insh = 1; next }
  insh && /^```/ { insh = 0; next }
  insh { emit($0) }
' README.md)

if [ "${#commands[@]}" -eq 0 ]; then
  echo "readme-check: found no commands in README.md" >&2
  exit 1
fi

ran=0 skipped=0
for cmd in "${commands[@]}"; do
  want=0
  if [[ "$cmd" =~ \#[[:space:]]*exit[[:space:]]+([0-9]+)[[:space:]]*$ ]]; then
    want="${BASH_REMATCH[1]}"
  fi
  if [[ "$cmd" =~ \#[[:space:]]*needs[[:space:]]+([^[:space:]]+) ]]; then
    need="${BASH_REMATCH[1]}"
    if [[ "$need" == http://* || "$need" == https://* ]]; then
      if ! curl -s -o /dev/null --max-time 5 "$need"; then
        echo "readme-check: SKIPPED (nothing answers at $need): $cmd"
        skipped=$((skipped + 1))
        continue
      fi
    elif [ -z "${!need:-}" ]; then
      echo "readme-check: SKIPPED ($need is not set): $cmd"
      skipped=$((skipped + 1))
      continue
    fi
  fi
  if [ -n "$skip_make_test" ] && [[ "$cmd" =~ ^make[[:space:]]+test([[:space:]]|$) ]]; then
    echo "readme-check: SKIPPED (--skip-make-test: CI ran it on this commit): $cmd"
    skipped=$((skipped + 1))
    continue
  fi
  echo "\$ $cmd"
  t0=$SECONDS
  set +e
  bash -o pipefail -c "$cmd"
  code=$?
  set -e
  if [ "$code" -ne "$want" ]; then
    echo "readme-check: FAILED (exit $code, want $want) in $tmp/evalflow:" >&2
    echo "  $cmd" >&2
    exit 1
  fi
  echo "readme-check: ok (exit $code, $((SECONDS - t0))s)"
  ran=$((ran + 1))
done
echo "readme-check: $ran commands ran as printed, $skipped skipped, $((SECONDS - start))s"
