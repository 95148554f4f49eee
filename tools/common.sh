# Shared by tools/run and tools/test: install what is missing, configure, build.
# Sourced, not executed.

RESTORESIM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian packages the build needs, by package name.
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
)

log() { printf '[restoresim] %s\n' "$*" >&2; }

# Installs the packages that are not installed yet (apt-get only when something is missing).
ensure_packages() {
  local missing=()
  for p in "${RESTORESIM_PACKAGES[@]}"; do
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
configure_build() {
  local dir="$1"; shift
  if [ -f "$RESTORESIM_ROOT/$dir/build.ninja" ]; then
    meson configure "$RESTORESIM_ROOT/$dir" "$@" >/dev/null
  else
    log "configuring $dir"
    meson setup "$RESTORESIM_ROOT/$dir" "$RESTORESIM_ROOT" "$@" >/dev/null
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
