# Shared by tools/run and tools/test: install what is missing, configure, build.
# Sourced, not executed.

RESTORESIM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian packages the restoresim binary needs (tools/run: no clang, no test libraries, no
# Maven or JDK). RocksDB and librdkafka are in so that the binary is the one tools/test builds
# (`bench restore --backend kafka`), and tools/test does not recompile it.
RESTORESIM_RUN_PACKAGES=(
  meson ninja-build g++ pkg-config
  libabsl-dev librocksdb-dev librdkafka-dev libboost-context-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev
)

# Debian packages the whole build and every suite need (tools/test), by package name.
RESTORESIM_PACKAGES=(
  meson ninja-build g++ clang cmake pkg-config
  # clang's sanitizer and libFuzzer runtimes (libclang_rt.fuzzer): tools/test --fuzz.
  libclang-rt-dev
  libgtest-dev libgmock-dev librapidcheck-dev
  libabsl-dev librocksdb-dev libbenchmark-dev librdkafka-dev libboost-context-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev
  # The local Kafka cluster of the kafka suite (tools/kafka/broker): Maven fetches the broker's
  # jars; the JDK (not only the JRE) runs the readiness probe as a single-file Java program.
  maven openjdk-17-jdk-headless
  # The sweep driver (tools/sweep): Debian's Python with venv, for build/venv (ensure_venv).
  python3 python3-venv
  # The man page restoresim.1 (tools/meson.build; not in RESTORESIM_RUN_PACKAGES: tools/run
  # builds the binary only, and a build without help2man skips the page).
  help2man
)

log() { printf '[restoresim %s] %s\n' "$(date +%T)" "$*" >&2; }

# ensure_packages [PACKAGE...]: installs the packages (default: RESTORESIM_PACKAGES) that are
# not installed yet (apt-get only when something is missing).
ensure_packages() {
  local wanted=("$@") missing=()
  if [ "${#wanted[@]}" -eq 0 ]; then wanted=("${RESTORESIM_PACKAGES[@]}"); fi
  for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -eq 0 ]; then return 0; fi
  log "installing missing packages: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}

# configure_build DIR [meson options...]: sets up DIR once (reconfigures if options changed).
# A directory tools/run set up with only RESTORESIM_RUN_PACKAGES (stamp .restoresim-run-only)
# is set up again from scratch detection (meson --reconfigure) by anything else, so the test
# libraries installed since are found; what was compiled stays compiled.
configure_build() {
  local dir="$1"; shift
  local stamp="$RESTORESIM_ROOT/$dir/.restoresim-run-only"
  if [ -f "$stamp" ] && [ "${RESTORESIM_RUN_ONLY:-0}" != 1 ]; then
    log "configuring $dir again (tools/run set it up without the test libraries)"
    quiet_or_show "configuring $dir" \
      meson setup --reconfigure "$RESTORESIM_ROOT/$dir" "$RESTORESIM_ROOT" "$@"
    rm -f "$stamp"
  elif [ -f "$RESTORESIM_ROOT/$dir/build.ninja" ]; then
    quiet_or_show "configuring $dir" meson configure "$RESTORESIM_ROOT/$dir" "$@"
    # Regenerate now if a meson.build changed, so the introspection that picks the targets to
    # build (tools/build_targets.py) knows the tests added since (else they are never built).
    quiet_or_show "configuring $dir" ninja -C "$RESTORESIM_ROOT/$dir" build.ninja
  else
    log "configuring $dir"
    quiet_or_show "configuring $dir" meson setup "$RESTORESIM_ROOT/$dir" "$RESTORESIM_ROOT" "$@"
    if [ "${RESTORESIM_RUN_ONLY:-0}" = 1 ]; then touch "$stamp"; fi
  fi
}

# quiet_or_show WHAT COMMAND...: runs COMMAND with its output kept aside; if it fails, prints
# the output's end and says WHAT failed (meson's errors name the file and line), and fails.
quiet_or_show() {
  local what="$1"; shift
  local out
  if ! out="$("$@" 2>&1)"; then
    printf '%s\n' "$out" | tail -n 30 >&2
    log "$what failed"
    return 1
  fi
}

# compile_build DIR [targets...]
compile_build() {
  local dir="$1"; shift
  log "building $dir"
  ninja -C "$RESTORESIM_ROOT/$dir" "$@" >"$RESTORESIM_ROOT/$dir/last-build.log" 2>&1 || {
    tail -n 60 "$RESTORESIM_ROOT/$dir/last-build.log" >&2
    log "build of $dir failed (full log: $dir/last-build.log)"
    return 1
  }
}

# The sweep driver's virtual environment (tools/sweep, the sweep suite): Debian's python3 (not
# whatever python3 comes first on PATH), the packages pinned in tools/dask/requirements.txt
# from PyPI. Reinstalled when the requirements change; serialised with flock, since the sweep
# suite's tests may call it at the same time. Prints nothing when the venv is up to date.
RESTORESIM_VENV="${RESTORESIM_VENV:-$RESTORESIM_ROOT/build/venv}"
RESTORESIM_PY_REQUIREMENTS="$RESTORESIM_ROOT/tools/dask/requirements.txt"
ensure_venv() {
  local venv="$RESTORESIM_VENV" stamp="$RESTORESIM_VENV/.restoresim-requirements"
  mkdir -p "$(dirname "$venv")"
  (
    flock 9
    if [ -x "$venv/bin/python" ] && cmp -s "$stamp" "$RESTORESIM_PY_REQUIREMENTS"; then
      exit 0
    fi
    log "installing the sweep driver's Python packages into $venv (from PyPI)"
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv" &&
      "$venv/bin/pip" install -q --disable-pip-version-check --no-input \
        -r "$RESTORESIM_PY_REQUIREMENTS" &&
      cp "$RESTORESIM_PY_REQUIREMENTS" "$stamp"
  ) 9>"$venv.lock"
}
