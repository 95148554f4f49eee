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

// Linux: this process's resident set now (VmRSS) and its peak (VmHWM) from /proc/self/status,
// in bytes; -1 when unknown.
int64_t ResidentBytes();
int64_t PeakResidentBytes();
// Returns freed heap to the OS (glibc's malloc_trim), so that the resident set is what the
// process holds live, then resets the peak to it (writes "5" to /proc/self/clear_refs, Linux
// >= 4.0); false when the reset failed (the peak then covers the whole process's life).
bool ResetPeakResident();

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
  // Peak resident set (bytes, -1: not measured). Ours: the whole benchmark process from the
  // runtime's start to its close, the peak reset at the start; rss_at_start_bytes is what the
  // process held then (the benchmark's own data among it). Kafka Streams: its JVM's peak.
  int64_t peak_rss_bytes = -1;
  int64_t rss_at_start_bytes = -1;

  double RecordsPerSecond() const { return seconds > 0 ? records / seconds : 0; }
  double MegabytesPerSecond() const { return seconds > 0 ? bytes / seconds / 1e6 : 0; }
  double CpuSecondsPerMillion() const { return records > 0 ? cpu_seconds * 1e6 / records : 0; }
};

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_MEASURE_H_
