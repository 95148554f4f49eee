#include "bench/measure.h"

#include <malloc.h>
#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <string>

namespace restoresim::bench {

double MonoSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

namespace {

// A "Name:   123 kB" line of /proc/self/status, in bytes; -1 when absent.
int64_t StatusBytes(const std::string& name) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (!line.starts_with(name + ":")) continue;
    try {
      return std::stoll(line.substr(name.size() + 1)) * 1024;
    } catch (...) {
      return -1;
    }
  }
  return -1;
}

}  // namespace

int64_t ResidentBytes() { return StatusBytes("VmRSS"); }
int64_t PeakResidentBytes() { return StatusBytes("VmHWM"); }

bool ResetPeakResident() {
  malloc_trim(0);  // freed heap back to the OS: the resident set is then what is live
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return clear.good();
}

Span Span::Begin() {
  Span span;
  span.start_s = MonoSeconds();
  span.cpu_start_s = CpuSeconds();
  return span;
}

void Span::End() {
  seconds = MonoSeconds() - start_s;
  cpu_seconds = CpuSeconds() - cpu_start_s;
}

}  // namespace restoresim::bench
