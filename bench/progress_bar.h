// The benchmarks' progress bar on stderr, one for both (`bench restore`: a step per case;
// `bench sim`: a step per sweep), only on a terminal: the caller decides.
//
// Thread-safety: the main thread only.
#ifndef RESTORESIM_BENCH_PROGRESS_BAR_H_
#define RESTORESIM_BENCH_PROGRESS_BAR_H_

#include <cstdio>
#include <string>

namespace restoresim::bench {

class ProgressBar {
 public:
  void Show(size_t done, size_t total, const std::string& what) {
    constexpr size_t kWidth = 30;
    const size_t filled = total == 0 ? kWidth : kWidth * done / total;
    std::string line = "\r[" + std::string(filled, '#') + std::string(kWidth - filled, '.') +
                       "] " + std::to_string(done) + "/" + std::to_string(total) + " " + what;
    if (line.size() > 118) line.resize(118);
    std::fprintf(stderr, "%s\033[K", line.c_str());
    std::fflush(stderr);
    shown_ = true;
  }
  void Clear() {
    if (!shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  bool shown_ = false;
};

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_PROGRESS_BAR_H_
