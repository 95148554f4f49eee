// The restore benchmark's report: tables (or JSON) on stdout, the JSON report and the SVG plot
// written where the options say. A ratio's headline is the median of the ratios taken within
// each round (both cases measured in the same round, close in time), with their range and the
// ratio of the medians over rounds beside it.
#ifndef RESTORESIM_BENCH_BENCH_REPORT_H_
#define RESTORESIM_BENCH_BENCH_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_results.h"
#include "bench/restore_bench.h"

namespace restoresim::bench {

// "2 cores, load average 1.2 0.9 0.8"
std::string MachineDescription();
std::string LoadAverages();
double LoadAverage1();  // the 1-minute load average; -1 when unknown
// Why the run's figures are not a result, or nullopt: the machine was busy when, in any
// round, processes other than the benchmark's own (machine_cpu.h) used more than
// kOthersShareMax of its cores on average. Where that is unknown (no /proc), when the load
// average (1 minute) before or after the round exceeded the number of cores (which counts the
// benchmark's own threads: on 2 cores it flags every full run).
inline constexpr double kOthersShareMax = 0.25;
std::optional<std::string> BusyReason(const BenchResults& results);

// A ratio of two cases' records/s: the median of the ratios within each round (the headline:
// both cases measured in the same round, close in time), their min..max, and the ratio of the
// medians over rounds.
struct Ratio {
  std::string name;
  std::string numerator, denominator;  // case ids
  double target = 0;                   // 0: none; compared with `paired`
  double paired = 0;                   // median of the per-round ratios
  double median = 0;                   // of medians
  Spread per_round;
  bool available = false;
};
std::vector<Ratio> Ratios(const BenchResults& results);
// The ratio of two cases' records/s (nullopt when no round has both).
std::optional<Ratio> RatioOf(const BenchResults& results, const std::string& numerator,
                             const std::string& denominator);
// The overlapped limit an "ours.*" case compares with ("" if none: a changelog of another
// size), and the Kafka Streams case restoring the same changelog ("" if not ours).
std::string OverlappedLimitOf(const BenchResults& results, const CaseSamples& c);
std::string PeerOf(const CaseSamples& c);
// The cell a ratio is printed as: "0.97 (0.95..0.99); of medians 0.96": the paired median
// (per-round range), then the ratio of medians.
std::string RatioCell(const Ratio& r);

nlohmann::json ToJson(const BenchResults& results);
void Report(const BenchResults& results, const RestoreBenchOptions& options);

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_BENCH_REPORT_H_
