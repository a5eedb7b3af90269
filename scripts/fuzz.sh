#!/usr/bin/env bash
# Runs every Go fuzz target of the module, each for $FUZZTIME (default 60s).
# `make fuzz` and `make fuzz-smoke` (CI, a few seconds each) call it.
#
# Targets are found, not listed: the packages whose tests declare a
# `func Fuzz…(f *testing.F)`, then `go test -list` for their exact names (go
# test -fuzz runs one target of one package at a time). A target that fails
# leaves its input in <package>/testdata/fuzz/<target>/ (which `go test`
# then replays as a regression test: commit it with the fix); the script
# names it, runs the other targets, and exits 1.
#
#   FUZZTIME=10m bash scripts/fuzz.sh          # longer
#   FUZZ='Glob|Mask' bash scripts/fuzz.sh      # only targets matching a regexp
#   FUZZPARALLEL=1 bash scripts/fuzz.sh        # fuzzing workers (default: GOMAXPROCS)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fuzztime="${FUZZTIME:-60s}"
only="${FUZZ:-.}"
parallel=()
[ -n "${FUZZPARALLEL:-}" ] && parallel=(-parallel "$FUZZPARALLEL")

# Packages (as ./dir) with a fuzz target in one of their test files.
mapfile -t pkgs < <(grep -rlE --include='*_test.go' --exclude-dir='.?*' --exclude-dir=testdata --exclude-dir=node_modules \
  '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . | xargs -r -n1 dirname | sort -u)
if [ "${#pkgs[@]}" -eq 0 ]; then
  echo "fuzz: no fuzz targets found" >&2
  exit 1
fi

# deadline_race reports whether the fuzzing run of target in pkg, whose
# output is in file out, failed only by Go's coordinator race: one failure,
# a bare "context deadline exceeded", and no input written since marker.
deadline_race() {
  local pkg=$1 target=$2 marker=$3 out=$4
  [ -z "$(find "$pkg/testdata/fuzz/$target" -type f -newer "$marker" 2>/dev/null)" ] &&
    grep -qx '    context deadline exceeded' "$out" && [ "$(grep -c -- '--- FAIL' "$out")" -eq 1 ]
}

failed=()
count=0
for pkg in "${pkgs[@]}"; do
  if ! list=$(go test -list '^Fuzz' "$pkg"); then
    echo "!! FUZZ FAILURE: $pkg: its tests do not build" >&2
    failed+=("$pkg (tests do not build)")
    count=$((count + 1))
    continue
  fi
  mapfile -t targets < <(grep '^Fuzz' <<<"$list" | grep -E "$only" || true)
  for target in "${targets[@]}"; do
    count=$((count + 1))
    echo "== $pkg $target ($fuzztime, $(date -u +%H:%M:%S))"
    marker=$(mktemp)
    out=$(mktemp)
    ok=true
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "${parallel[@]}" "$pkg" 2>&1 | tee "$out" || ok=false
    # Go 1.26's fuzzing coordinator can report its own -fuzztime deadline
    # as the target's failure when the thread cancelling its workers is
    # preempted (go.dev/issue/75804, fixed in Go 1.27): a bare "context
    # deadline exceeded" with no input written, likelier on a loaded
    # machine (CI saw it twice in a row). Such a run is tried once more;
    # if that one ends the same way, the target's corpus is replayed
    # instead, and the target passes if the replay does. A real failure
    # always writes its input first, so it still fails.
    if ! $ok && deadline_race "$pkg" "$target" "$marker" "$out"; then
      echo "== $pkg $target: the coordinator's deadline race (go.dev/issue/75804), no input written: once more"
      ok=true
      go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "${parallel[@]}" "$pkg" 2>&1 | tee "$out" || ok=false
      if ! $ok && deadline_race "$pkg" "$target" "$marker" "$out"; then
        echo "== $pkg $target: the same race again; replaying its corpus instead"
        ok=true
        go test -run "^${target}\$" -count 1 "$pkg" || ok=false
      fi
    fi
    rm -f "$out"
    if ! $ok; then
      echo "!! FUZZ FAILURE: $pkg $target" >&2
      found=$(find "$pkg/testdata/fuzz/$target" -type f -newer "$marker" 2>/dev/null || true)
      if [ -n "$found" ]; then
        echo "!! failing input(s), replayed by 'go test -run=$target/<name> $pkg':" >&2
        echo "$found" | sed 's/^/!!   /' >&2
      else
        echo "!! no new input was written: a seed or a testdata/fuzz entry failed, or the target did not build: see above" >&2
      fi
      failed+=("$pkg $target")
    fi
    rm -f "$marker"
  done
done

if [ "$count" -eq 0 ]; then
  echo "fuzz: no target matches FUZZ='$only'" >&2
  exit 1
fi
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz: ${#failed[@]} of $count targets FAILED:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fuzz: $count targets passed, $fuzztime each"
