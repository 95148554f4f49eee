#!/usr/bin/env bash
# tools/build-fast end to end (suite slow: two full compilations): the profile-optimised binary
# gives the same trace hashes as the plain one ($RESTORESIM_BIN) under three strategies, a second
# call finds it up to date without compiling, and bad arguments exit 2.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="build-fast-test-$$"
trap 'rm -rf "$root/$dir"' EXIT
export RESTORESIM_BUILD_FAST_DIR="$dir"

fail() { echo "FAIL: $*" >&2; exit 1; }

for bad in "--train-seeds" "--train-seeds 0" "--train-seeds x" "--no-such-flag"; do
  # shellcheck disable=SC2086
  set +e; "$root/tools/build-fast" $bad >/dev/null 2>&1; status=$?; set -e
  [ "$status" -eq 2 ] || fail "tools/build-fast $bad exited $status, not 2"
done

fast="$("$root/tools/build-fast" --train-seeds 2)"
[ "$fast" = "$root/$dir/tools/restoresim" ] || fail "printed '$fast'"
[ -x "$fast" ] || fail "no binary at $fast"

hash_of() {
  "$1" explore --scenario 'scenario.*' --seeds 10 --strategy "$2" --jobs 2 --quiet \
    --repro-dir '' | sed -n 's/.*trace hash \(0x[0-9a-f]*\).*/\1/p'
}
for strategy in random pct:3 pos; do
  plain="$(hash_of "$RESTORESIM_BIN" "$strategy")"
  optimised="$(hash_of "$fast" "$strategy")"
  [ -n "$plain" ] && [ "$plain" = "$optimised" ] ||
    fail "$strategy: trace hash $optimised, the plain binary's $plain"
  echo "$strategy: both $plain"
done

again="$("$root/tools/build-fast" 2>"$root/$dir/again.log")"
[ "$again" = "$fast" ] || fail "second call printed '$again'"
grep -q "is up to date" "$root/$dir/again.log" || fail "second call did not find it up to date"
echo "PASS"
