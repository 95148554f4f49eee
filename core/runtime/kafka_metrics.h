// Kafka's metric model, the small part the runtime needs: a metric named by (group, name, tags)
// with a value, as KafkaStreams.metrics() lists it, and the sampled stats Kafka's sensors
// measure with (org.apache.kafka.common.metrics.stats), paraphrased:
//   Avg             the mean of the values recorded in the live samples (NaN if none: Kafka's
//                   Avg of no samples);
//   Rate            the sum of the values recorded in the live samples per second of the window
//                   they span (at least num_samples - 1 full windows, as Kafka's Rate);
//   WindowedCount   a Rate of the number of recordings instead of their values;
//   CumulativeSum   the sum of every value recorded (Kafka's "-total" metrics).
// A sample covers window_ns (metrics.sample.window.ms, 30 s) from its first recording; a new
// one starts when it is full; num_samples (metrics.num.samples, 2) are kept, and one older
// than num_samples windows is dropped when measured or recorded. Time is the caller's (the
// clock port: virtual in the simulation).
//
// Thread-safety: values; SampledStat is not thread-safe (one recording thread; readers measure
// a published copy).
#ifndef RESTORESIM_CORE_RUNTIME_KAFKA_METRICS_H_
#define RESTORESIM_CORE_RUNTIME_KAFKA_METRICS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/sync/clock.h"

namespace restoresim {

struct KafkaMetric {
  std::string group;                        // e.g. "stream-state-updater-metrics"
  std::string name;                         // e.g. "idle-ratio"
  std::map<std::string, std::string> tags;  // e.g. {"thread-id": ...}
  double value = 0;

  // "group name{k=v,...}": the metric's identity, as Kafka's MetricName prints its parts.
  std::string Key() const;
};

// Kafka's MetricConfig, the sampling part.
struct SampleConfig {
  int32_t num_samples = 2;                 // metrics.num.samples
  TimeNs sample_window_ns = 30 * kSecond;  // metrics.sample.window.ms
  static constexpr int32_t kSamplesMax = 64;
};

class SampledStat {
 public:
  enum class Kind { kAvg, kRate, kWindowedCount };

  SampledStat(Kind kind, SampleConfig config);
  void Record(double value, TimeNs now_ns);
  double Measure(TimeNs now_ns) const;

 private:
  struct Sample {
    TimeNs start_ns = 0;
    double value = 0;
    int64_t events = 0;
  };
  // Inline up to Kafka's default num_samples (2): a stat is copied with every snapshot the
  // restore thread publishes, each loop iteration, and then allocates nothing.
  using Samples = absl::InlinedVector<Sample, 2>;
  // Kafka's purgeObsoleteSamples, on a copy for Measure.
  static void Purge(Samples& samples, const SampleConfig& config, TimeNs now_ns);
  // Kafka's Rate.windowSize: what the live samples span, in seconds.
  double WindowSeconds(const Samples& samples, TimeNs now_ns) const;

  Kind kind_;
  SampleConfig config_;
  Samples samples_;
  size_t current_ = 0;
};

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_KAFKA_METRICS_H_
