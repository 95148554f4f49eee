// Built instead of the benchmark when meson did not find RocksDB: the restore benchmark
// restores into RocksDB stores, so without them `restoresim bench restore` says
// why it cannot run (the sim benchmark is unaffected).
#include <cstdio>

#include "bench/restore_bench.h"

namespace restoresim::bench {

absl::Status CheckRocksDbLibrary(const std::string&) {
  return absl::InvalidArgumentError("--rocksdb-library: this build has no RocksDB");
}

int RunRestoreBench(const RestoreBenchOptions&) {
  std::fprintf(stderr,
               "restoresim bench restore: the restore benchmark needs RocksDB; this build has "
               "none (install librocksdb-dev and reconfigure)\n");
  return 3;
}

int RunRestoreChild(const std::string&, const std::string&, const std::string&) {
  std::fprintf(stderr,
               "restoresim bench restore --restore-child: this build has no RocksDB (install "
               "librocksdb-dev and reconfigure)\n");
  return 3;
}

}  // namespace restoresim::bench
