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
