#include "bench/measure.h"

#include <sys/resource.h>

#include <chrono>

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
