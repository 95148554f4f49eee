// Merging the reports of a sweep's shards (`explore --shard I/N --json`, one per I) into the
// report one process running the whole sweep would have given: counts add, first seeds take
// the minimum, trace hashes XOR (per scenario and sweep-wide), coverage counts add, failures
// of each scenario are the lowest failures_kept_max seeds over all shards (each shard kept its
// own lowest, so the union holds the sweep's), and only the first repros_max of them keep
// their repro files, as in one process. A planted bug is found if any shard found it.
// Timing is the only part that is not the single process's: the slowest shard's wall time and
// the seeds per second over it, with every shard's own timing listed.
//
// Refused (InvalidArgument, one line naming the files): shards of different sweeps (build,
// scenarios, strategy, seed range, run options), of different shard counts, a shard given
// twice, a shard missing, and a shard whose run counts are not those of its seeds (an
// interrupted or edited run).
//
// Thread-safety: pure function.
#ifndef RESTORESIM_SIM_SWEEP_MERGE_H_
#define RESTORESIM_SIM_SWEEP_MERGE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/sweep_report.h"

namespace restoresim::sim {

inline constexpr size_t kMergeShardsMax = 100'000;

struct ShardReport {
  std::string source;  // where it came from (a file name), for messages
  SweepReport report;
};

// Runs of each scenario in shard `index` of `count` over `seeds` seeds.
uint64_t ShardRuns(uint64_t seeds, uint32_t index, uint32_t count);

absl::StatusOr<SweepReport> MergeShardReports(const std::vector<ShardReport>& shards);

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_SWEEP_MERGE_H_
