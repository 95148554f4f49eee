// What a restore benchmark run collected, for the report (tables, JSON) and the SVG plot.
#ifndef RESTORESIM_BENCH_BENCH_RESULTS_H_
#define RESTORESIM_BENCH_BENCH_RESULTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bench/changelog_data.h"
#include "bench/measure.h"

namespace restoresim::bench {

// One case (a limit, one of our restorations, Kafka Streams) over the rounds.
struct CaseSamples {
  std::string id;     // e.g. "ours.scratch.default", "limit.overlap.bulk", "peer.scratch"
  std::string label;  // what the table prints
  int64_t size = 0;   // changelog records
  std::vector<Measurement> rounds;
};

// One round of the processing pair (seconds since Runtime::Start).
struct ProcessingSample {
  double first_processed_restoring_s = -1;  // the no-restore task, while another restores
  double first_processed_idle_s = -1;       // the same, nothing restoring
  double restore_start_s = -1;
  double restore_end_s = -1;
  double window_s = 0;          // the window both rates are measured over
  double rate_restoring = -1;   // records/s processed during the restoration
  double rate_idle = -1;        // records/s over the same stretch, nothing restoring
};

// min / median / max of some figure over rounds.
struct Spread {
  double min = 0, median = 0, max = 0;
  int n = 0;
  static Spread Of(std::vector<double> values);
};

struct BenchResults {
  std::string backend;
  std::string spec;
  std::string peer_version;  // Kafka Streams' (empty without --peer)
  int32_t rounds = 0;
  int64_t records = 0;       // the main size
  int64_t checkpoint_records = 0;
  int64_t process_records = 0;
  std::string machine;       // cores, load averages at start and end
  std::string eos_changelog;  // --guarantee exactly_once_v2: how its changelog was written
  std::vector<CaseSamples> cases;
  std::vector<ProcessingSample> processing;
  std::vector<std::string> problems;  // wrong store contents and the like
  double seconds = 0;

  const CaseSamples* Find(const std::string& id) const;
};

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_BENCH_RESULTS_H_
