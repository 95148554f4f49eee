// `restoresim soak` in a build without librdkafka or RocksDB: says so and exits 2.
#include <cstdio>

#include "soak/soak_driver.h"
#include "soak/soak_instance.h"

namespace restoresim::soak {

int RunSoak(const SoakOptions&, std::FILE*) {
  std::fprintf(stderr, "restoresim soak: this build has no librdkafka or no RocksDB (meson "
                       "features 'kafka' and 'rocksdb'); the soak needs both\n");
  return kSoakExitUsage;
}

int AuditStateDirectory(const SoakOptions& options, const std::string&, const std::string&,
                        std::FILE* out) {
  return RunSoak(options, out);
}

std::string RerunLine(const SoakOptions&) { return ""; }

int RunSoakInstance(const InstanceOptions&) { return RunSoak(SoakOptions{}, stderr); }

}  // namespace restoresim::soak
