# tools/test --fuzz: builds and runs the libFuzzer targets of fuzz/. Sourced by tools/test
# (which provides log, configure_build, compile_build and the passed/failed counters).
#
# The build (build-fuzz) is clang with ASan+UBSan at -O1 with line tables, tests and benchmarks
# off, and compiles only the fuzz targets. Each target runs for RESTORESIM_FUZZ_SECONDS
# (default 20; set it higher to fuzz longer by hand), RESTORESIM_FUZZ_JOBS at a time (default the
# core count), on a scratch copy of its corpus: new inputs go to build-fuzz/corpus/<target>/,
# the committed seeds (fuzz/corpus/<target>/) are only read.
# A clean run is one pass. A finding (a crash, a broken contract, a sanitizer report, a leak, a
# timeout of one input past 10 s, more than 2 GB) is one failure; libFuzzer saves the input
# in build-fuzz/findings/<target>/ and the path is printed. Replay it with
#   build-fuzz/fuzz/<target> build-fuzz/findings/<target>/crash-...

run_fuzz_targets() {
  local seconds="${RESTORESIM_FUZZ_SECONDS:-20}"
  local dir="$RESTORESIM_ROOT/build-fuzz"
  CC=clang CXX=clang++ configure_build build-fuzz -Dfuzz=enabled -Dtests=disabled \
    -Dbenchmarks=disabled -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=1 \
    -Ddebug=false -Dcpp_args=-g1 -Dc_args=-g1
  local targets
  targets=$("$RESTORESIM_ROOT/tools/build_targets.py" "$dir" --dir fuzz | grep '_fuzzer$' || true)
  if [ -z "$targets" ]; then
    log "fuzz FAILED: no fuzz targets configured in build-fuzz"
    failed=$((failed + 1))
    return 0
  fi
  # shellcheck disable=SC2086
  if ! compile_build build-fuzz $targets; then
    failed=$((failed + 1))
    return 0
  fi
  # Each target's fuzzing is one process, so a batch of one per core gives each about the runs
  # it got alone (six 20 s targets took 120 s one after another, 64 s two at a time).
  local jobs="${RESTORESIM_FUZZ_JOBS:-$(nproc)}"
  local batch=()
  for target in $targets; do
    batch+=("$target")
    if [ "${#batch[@]}" -ge "$jobs" ]; then
      fuzz_batch "$dir" "$seconds" "${batch[@]}"
      batch=()
    fi
  done
  if [ "${#batch[@]}" -gt 0 ]; then fuzz_batch "$dir" "$seconds" "${batch[@]}"; fi
}

# fuzz_batch DIR SECONDS TARGET...: fuzzes the targets side by side, then reports each in turn.
fuzz_batch() {
  local dir="$1" seconds="$2"; shift 2
  local target name pids=() rcs=()
  for target in "$@"; do
    name="$(basename "$target")"
    rm -rf "$dir/corpus/$name" "$dir/findings/$name"
    mkdir -p "$dir/corpus/$name" "$dir/findings/$name"
    log "fuzzing $name for ${seconds}s (seeds: fuzz/corpus/$name)"
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      "$dir/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$dir/findings/$name/" \
      "$dir/corpus/$name" "$RESTORESIM_ROOT/fuzz/corpus/$name" >"$dir/$name.log" 2>&1 &
    pids+=("$!")
  done
  local pid
  for pid in "${pids[@]}"; do
    if wait "$pid"; then rcs+=(0); else rcs+=(1); fi
  done
  local i=0 out findings what saved
  for target in "$@"; do
    name="$(basename "$target")"
    out="$dir/$name.log"
    findings="$dir/findings/$name"
    if [ "${rcs[$i]}" -eq 0 ]; then
      passed=$((passed + 1))
      log "$name: clean; $(fuzz_summary "$out")"
    else
      failed=$((failed + 1))
      # What broke (a contract's message is the line after it), not the stack traces.
      what="$(grep -E -A1 'contract broken|check failed|ERROR: [A-Za-z]+|runtime error|^SUMMARY' \
        "$out" | grep -v '^ *#[0-9]' | head -n 12 || true)"
      if [ -n "$what" ]; then echo "$what" >&2; else tail -n 20 "$out" >&2; fi
      saved="$(find "$findings" -type f | sort)"
      log "$name FAILED (full log: build-fuzz/$name.log); input saved: ${saved:-none}"
    fi
    i=$((i + 1))
  done
}

# "N runs (N/s), corpus N/SIZE (inputs/bytes)": from the final stats and the last status line.
fuzz_summary() {
  local log_file="$1" runs rate corpus
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log_file" | tail -n1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log_file" | tail -n1)
  corpus=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE|INITED)' "$log_file" | tail -n1 | \
    sed -n 's/.*corp: \([0-9]*\/[0-9A-Za-z]*\).*/\1/p')
  echo "${runs:-?} runs (${rate:-?}/s), corpus ${corpus:-?} (inputs/bytes)"
}
