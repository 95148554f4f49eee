// What one timed run of the restore benchmark measured, and how: wall time on the steady clock,
// CPU time of the whole process from getrusage (every thread: ours, librdkafka's, RocksDB's
// background flushes and compactions, and with the fake backend the broker too).
//
// Thread-safety: Span is a value; CpuSeconds and MonoSeconds may be called from any thread.
#ifndef RESTORESIM_BENCH_MEASURE_H_
#define RESTORESIM_BENCH_MEASURE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace restoresim::bench {

double MonoSeconds();  // steady clock
double CpuSeconds();   // user + system time of this process

// A wall-clock and CPU interval.
struct Span {
  double start_s = 0;
  double cpu_start_s = 0;
  double seconds = 0;
  double cpu_seconds = 0;

  static Span Begin();
  void End();
};

// One measurement of a restore path: records (and bytes) per second, CPU per million records,
// the progress over time (seconds since its start, records so far), whether its store ended
// with the expected contents, and notes (the write path taken, chunk files).
struct Measurement {
  int64_t records = 0;
  int64_t bytes = 0;
  double seconds = 0;
  double cpu_seconds = 0;
  bool contents_checked = false;
  bool contents_ok = true;
  std::string note;
  std::vector<std::pair<double, int64_t>> progress;

  double RecordsPerSecond() const { return seconds > 0 ? records / seconds : 0; }
  double MegabytesPerSecond() const { return seconds > 0 ? bytes / seconds / 1e6 : 0; }
  double CpuSecondsPerMillion() const { return records > 0 ? cpu_seconds * 1e6 / records : 0; }
};

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_MEASURE_H_
