// What a restore benchmark run collected, for the report (tables, JSON) and the SVG plot.
#ifndef RESTORESIM_BENCH_BENCH_RESULTS_H_
#define RESTORESIM_BENCH_BENCH_RESULTS_H_

#include <cstdint>
#include <map>
#include <optional>
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

// One round of the processing pair (seconds since Runtime::Start; nullopt: did not happen).
// The window is where the restoration and the processing task's work overlap in the run with a
// restoration: from the later of the restoration's start and the first processed record to the
// earlier of the restoration's end and the last input record processed. In the idle run the
// same length from the same offset after its first processed record, cut where its input ran
// out. Rates are nullopt, with `why_not` saying why, when either window is shorter than
// kMinProcessingWindowS.
inline constexpr double kMinProcessingWindowS = 0.1;
struct ProcessingSample {
  std::optional<double> first_processed_restoring_s;  // the no-restore task, another restoring
  std::optional<double> first_processed_idle_s;       // the same, nothing restoring
  std::optional<double> restore_start_s;
  std::optional<double> restore_end_s;
  int64_t restored = 0;        // records restored by the restoration's end (the changelog's)
  double window_from_s = 0;    // the overlap, in the run with a restoration
  double window_to_s = 0;
  double idle_window_s = 0;    // the idle run's stretch (shorter only if its input ran out)
  bool input_ran_out = false;  // the overlap ended with the input, before the restoration did
  std::optional<double> rate_restoring;  // records/s processed during the overlap
  std::optional<double> rate_idle;       // records/s over the same stretch, nothing restoring
  std::string why_not;                   // why the rates are missing ("" when measured)
  double window_s() const { return window_to_s - window_from_s; }
  std::optional<double> Ratio() const {
    if (!rate_restoring || !rate_idle || *rate_idle <= 0) return std::nullopt;
    return *rate_restoring / *rate_idle;
  }
};

// The load average (1 minute) before and after one round, and who used the CPUs during it
// (machine_cpu.h): the benchmark's own processes and everyone else's, in cores.
struct RoundLoad {
  double before = -1;  // -1: unknown (getloadavg failed)
  double after = -1;
  double own_cores = -1;  // -1: unknown (no /proc)
  double others_cores = -1;
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
  std::string rocksdb;       // the RocksDB our cases ran on (rocksdb_library.h)
  int32_t rounds = 0;
  int64_t records = 0;       // the main size
  int64_t checkpoint_records = 0;
  int64_t process_records = 0;
  int64_t process_restore_records = 0;  // what the pair's restoring task restores
  std::string machine;       // cores, load averages at start and end
  int32_t cores = 0;
  std::vector<RoundLoad> loads;  // per round
  std::string process_sizing;    // how the processing runs' input was sized
  std::string eos_changelog;  // --guarantee exactly_once_v2: how its changelog was written
  std::vector<CaseSamples> cases;
  std::vector<ProcessingSample> processing;
  std::vector<ProcessingSample> peer_processing;  // the same pair run by Kafka Streams
  std::vector<std::string> problems;  // wrong store contents and the like
  double seconds = 0;

  const CaseSamples* Find(const std::string& id) const;
};

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_BENCH_RESULTS_H_
