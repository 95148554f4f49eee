#include "core/runtime/kafka_metrics.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "core/util/check.h"

namespace restoresim {

std::string KafkaMetric::Key() const {
  std::string tag_list;
  for (const auto& [k, v] : tags) {
    tag_list += fmt::format("{}{}={}", tag_list.empty() ? "" : ",", k, v);
  }
  return fmt::format("{} {}{{{}}}", group, name, tag_list);
}

SampledStat::SampledStat(Kind kind, SampleConfig config) : kind_(kind), config_(config) {
  RS_CHECK(config_.num_samples >= 1 && config_.num_samples <= SampleConfig::kSamplesMax &&
               config_.sample_window_ns > 0,
           "sample config: {} samples of {} ns", config_.num_samples, config_.sample_window_ns);
}

void SampledStat::Record(double value, TimeNs now_ns) {
  if (samples_.empty()) samples_.push_back(Sample{.start_ns = now_ns});
  if (now_ns - samples_[current_].start_ns >= config_.sample_window_ns) {
    // The current sample is complete: the next one starts (or the oldest is reused).
    current_ = (current_ + 1) % static_cast<size_t>(config_.num_samples);
    if (current_ >= samples_.size()) {
      samples_.push_back(Sample{.start_ns = now_ns});
    } else {
      samples_[current_] = Sample{.start_ns = now_ns};
    }
  }
  Sample& s = samples_[current_];
  s.value += kind_ == Kind::kWindowedCount ? 1.0 : value;
  ++s.events;
  RS_CHECK(samples_.size() <= static_cast<size_t>(config_.num_samples), "{} samples kept",
           samples_.size());
}

void SampledStat::Purge(Samples& samples, const SampleConfig& config, TimeNs now_ns) {
  const TimeNs expire_ns = config.num_samples * config.sample_window_ns;
  for (Sample& s : samples) {
    if (now_ns - s.start_ns >= expire_ns) s = Sample{.start_ns = now_ns};
  }
}

double SampledStat::WindowSeconds(const Samples& samples, TimeNs now_ns) const {
  TimeNs oldest_ns = now_ns;
  for (const Sample& s : samples) oldest_ns = std::min(oldest_ns, s.start_ns);
  TimeNs elapsed_ns = now_ns - oldest_ns;
  const int64_t full_windows = elapsed_ns / config_.sample_window_ns;
  const int64_t min_full_windows = config_.num_samples - 1;
  if (full_windows < min_full_windows) {
    elapsed_ns += (min_full_windows - full_windows) * config_.sample_window_ns;
  }
  return static_cast<double>(elapsed_ns) / kSecond;
}

double SampledStat::Measure(TimeNs now_ns) const {
  Samples live = samples_;
  Purge(live, config_, now_ns);
  double value = 0;
  int64_t events = 0;
  for (const Sample& s : live) {
    value += s.value;
    events += s.events;
  }
  if (kind_ == Kind::kAvg) {
    return events == 0 ? std::numeric_limits<double>::quiet_NaN()
                       : value / static_cast<double>(events);
  }
  const double seconds = WindowSeconds(live, now_ns);
  return seconds > 0 ? value / seconds : 0;
}

}  // namespace restoresim
