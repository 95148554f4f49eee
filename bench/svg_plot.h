// The restore benchmark's plot, as a self-contained SVG written by our own code: on the left,
// restore throughput over time for the main changelog (our default path, our WriteBatch path,
// Kafka Streams; the median round of each), on the right, records/s against changelog size
// (median, with the min..max of the rounds as whiskers; logarithmic size axis).
#ifndef RESTORESIM_BENCH_SVG_PLOT_H_
#define RESTORESIM_BENCH_SVG_PLOT_H_

#include <string>

#include "bench/bench_results.h"

namespace restoresim::bench {

std::string RestorePlotSvg(const BenchResults& results);

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_SVG_PLOT_H_
