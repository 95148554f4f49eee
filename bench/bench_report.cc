#include "bench/bench_report.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "bench/svg_plot.h"

namespace restoresim::bench {
namespace {

std::string Rate(double r) {
  if (r >= 1e6) return fmt::format("{:.2f}M", r / 1e6);
  if (r >= 1e3) return fmt::format("{:.0f}k", r / 1e3);
  return fmt::format("{:.0f}", r);
}

template <typename F>
Spread SpreadOf(const CaseSamples& c, F figure) {
  std::vector<double> v;
  for (const Measurement& m : c.rounds) v.push_back(figure(m));
  return Spread::Of(v);
}

Spread RateSpread(const CaseSamples& c) {
  return SpreadOf(c, [](const Measurement& m) { return m.RecordsPerSecond(); });
}

nlohmann::json SpreadJson(const Spread& s) {
  return {{"min", s.min}, {"median", s.median}, {"max", s.max}};
}

std::string Verdict(const Ratio& r) {
  if (r.target <= 0 || !r.available) return "";
  return r.paired >= r.target ? "met" : "MISSED";
}

// Pads to `width` columns of the terminal: UTF-8 continuation bytes take none ("‖").
std::string Pad(const std::string& s, size_t width) {
  size_t columns = 0;
  for (unsigned char c : s) columns += (c & 0xC0) != 0x80 ? 1 : 0;
  return columns >= width ? s + " " : s + std::string(width - columns, ' ');
}

std::string CaseRatioCell(const std::optional<Ratio>& r) { return r ? RatioCell(*r) : "-"; }

void PrintCases(const BenchResults& results) {
  std::printf("\n%s%s%s%s%s%s\n", Pad("case (changelog records)", 52).c_str(),
              Pad("records/s min/median/max", 25).c_str(), Pad("MB/s", 7).c_str(),
              Pad("CPU-s/1M med (range)", 22).c_str(), Pad("/ overlapped limit", 37).c_str(),
              "/ Kafka Streams");
  for (const CaseSamples& c : results.cases) {
    if (c.rounds.empty()) continue;
    const Spread rate = RateSpread(c);
    const Spread mb = SpreadOf(c, [](const Measurement& m) { return m.MegabytesPerSecond(); });
    const Spread cpu = SpreadOf(c, [](const Measurement& m) { return m.CpuSecondsPerMillion(); });
    const bool ours = c.id.starts_with("ours.");
    std::printf(
        "%s%s%s%s%s%s\n", Pad(fmt::format("{} ({})", c.label, c.size), 52).c_str(),
        Pad(fmt::format("{} / {} / {}", Rate(rate.min), Rate(rate.median), Rate(rate.max)), 25)
            .c_str(),
        Pad(fmt::format("{:.1f}", mb.median), 7).c_str(),
        Pad(fmt::format("{:.2f} ({:.2f}..{:.2f})", cpu.median, cpu.min, cpu.max), 22).c_str(),
        Pad(ours ? CaseRatioCell(RatioOf(results, c.id, OverlappedLimitOf(results, c))) : "", 37)
            .c_str(),
        ours ? CaseRatioCell(RatioOf(results, c.id, PeerOf(c))).c_str() : "");
  }
  std::printf("\nhow each ran (first round): ");
  for (const CaseSamples& c : results.cases) {
    if (!c.rounds.empty()) std::printf("\n  %s: %s", c.id.c_str(), c.rounds[0].note.c_str());
  }
  std::printf("\n");
}

nlohmann::json Optional(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

// Seconds, or "n/a (why)" for a time that did not happen.
std::string SecondsText(const std::optional<double>& t, const char* why) {
  return t ? fmt::format("{:.3f} s", *t) : fmt::format("n/a ({})", why);
}

std::vector<double> ProcessingRatios(const std::vector<ProcessingSample>& samples) {
  std::vector<double> ratios;
  for (const ProcessingSample& s : samples) {
    if (std::optional<double> r = s.Ratio()) ratios.push_back(*r);
  }
  return ratios;
}

// Ours / Kafka Streams' ratio of processing while restoring to idle, per round where both
// measured one.
std::vector<double> OursToPeer(const BenchResults& results) {
  std::vector<double> v;
  for (size_t r = 0; r < std::min(results.processing.size(), results.peer_processing.size());
       ++r) {
    const std::optional<double> ours = results.processing[r].Ratio();
    const std::optional<double> theirs = results.peer_processing[r].Ratio();
    if (ours && theirs && *theirs > 0) v.push_back(*ours / *theirs);
  }
  return v;
}

nlohmann::json ProcessingRoundJson(const ProcessingSample& s) {
  const bool measured = s.Ratio().has_value();
  return {{"first_processed_while_restoring_s", Optional(s.first_processed_restoring_s)},
          {"first_processed_idle_s", Optional(s.first_processed_idle_s)},
          {"restore_start_s", Optional(s.restore_start_s)},
          {"restore_end_s", Optional(s.restore_end_s)},
          {"restored_records", s.restored},
          {"window_from_s", measured ? nlohmann::json(s.window_from_s) : nlohmann::json()},
          {"window_to_s", measured ? nlohmann::json(s.window_to_s) : nlohmann::json()},
          {"window_s", measured ? nlohmann::json(s.window_s()) : nlohmann::json()},
          {"idle_window_s", measured ? nlohmann::json(s.idle_window_s) : nlohmann::json()},
          {"input_ran_out", s.input_ran_out},
          {"rate_while_restoring", Optional(s.rate_restoring)},
          {"rate_idle", Optional(s.rate_idle)},
          {"ratio", Optional(s.Ratio())},
          {"reason", measured ? nlohmann::json() : nlohmann::json(s.why_not)}};
}

nlohmann::json SamplesJson(const std::vector<ProcessingSample>& samples) {
  nlohmann::json rounds = nlohmann::json::array();
  std::vector<double> first_busy, first_idle;
  for (const ProcessingSample& s : samples) {
    rounds.push_back(ProcessingRoundJson(s));
    if (s.first_processed_restoring_s) first_busy.push_back(*s.first_processed_restoring_s);
    if (s.first_processed_idle_s) first_idle.push_back(*s.first_processed_idle_s);
  }
  const Spread ratio = Spread::Of(ProcessingRatios(samples));
  auto spread = [](const Spread& s) { return s.n > 0 ? SpreadJson(s) : nlohmann::json(); };
  return {{"rounds", rounds},
          {"ratio_while_restoring_to_idle", spread(ratio)},
          {"ratio_reason", ratio.n > 0 ? nlohmann::json()
                                       : nlohmann::json("not measurable in any round: see "
                                                        "each round's reason")},
          {"first_processed_while_restoring_s", spread(Spread::Of(first_busy))},
          {"first_processed_idle_s", spread(Spread::Of(first_idle))}};
}

nlohmann::json ProcessingJson(const BenchResults& results) {
  nlohmann::json j = SamplesJson(results.processing);
  j["input_records"] = results.process_records;
  j["restoring_records"] = results.process_restore_records;
  j["input_sizing"] = results.process_sizing;
  j["target"] = 0.9;
  if (results.peer_processing.empty()) {
    j["kafka_streams"] = nlohmann::json();
    return j;
  }
  j["kafka_streams"] = SamplesJson(results.peer_processing);
  const Spread vs = Spread::Of(OursToPeer(results));
  j["ours_to_kafka_streams"] = vs.n > 0 ? SpreadJson(vs) : nlohmann::json();
  j["ours_to_kafka_streams_reason"] =
      vs.n > 0 ? nlohmann::json()
               : nlohmann::json("no round in which both measured a ratio");
  return j;
}

void PrintProcessingRound(size_t r, const ProcessingSample& s) {
  std::printf("  round %zu: first record processed at %s vs %s idle; restoration %s..%s (%lld "
              "records); ",
              r + 1, SecondsText(s.first_processed_restoring_s, "none processed").c_str(),
              SecondsText(s.first_processed_idle_s, "none processed").c_str(),
              SecondsText(s.restore_start_s, "not timed").c_str(),
              SecondsText(s.restore_end_s, "not timed").c_str(),
              static_cast<long long>(s.restored));
  if (!s.Ratio()) {
    std::printf("rates n/a (%s)\n", s.why_not.c_str());
    return;
  }
  std::printf("over %.3f..%.3f s (%.2f s%s) %s/s while restoring vs %s/s idle (over %.2f s): "
              "%.2f\n",
              s.window_from_s, s.window_to_s, s.window_s(),
              s.input_ran_out ? ", cut where the input ran out" : "",
              Rate(*s.rate_restoring).c_str(), Rate(*s.rate_idle).c_str(), s.idle_window_s,
              *s.Ratio());
}

// The rounds of one pair and their summary (ours, or Kafka Streams' with `target` false).
void PrintPairRounds(const std::vector<ProcessingSample>& samples, bool target) {
  std::vector<double> busy, idle;
  for (size_t r = 0; r < samples.size(); ++r) {
    const ProcessingSample& s = samples[r];
    PrintProcessingRound(r, s);
    if (s.first_processed_restoring_s) busy.push_back(*s.first_processed_restoring_s);
    if (s.first_processed_idle_s) idle.push_back(*s.first_processed_idle_s);
  }
  const Spread b = Spread::Of(busy);
  const Spread i = Spread::Of(idle);
  if (b.n > 0 && i.n > 0 && i.median > 0) {
    std::printf("  time to first processed record: %.3f s median (%.3f..%.3f) while another "
                "task restores, %.3f s (%.3f..%.3f) with nothing restoring: ratio %.2f\n",
                b.median, b.min, b.max, i.median, i.min, i.max, b.median / i.median);
  } else {
    std::printf("  time to first processed record: n/a (no record processed in a run)\n");
  }
  const Spread ratio = Spread::Of(ProcessingRatios(samples));
  if (ratio.n == 0) {
    std::printf("  processing rate while restoring / idle: n/a (not measurable in any round: "
                "see each round's reason)\n");
    return;
  }
  std::printf("  processing rate while restoring / idle: %.2f median of %d round(s) (%.2f..%.2f)"
              "%s\n",
              ratio.median, ratio.n, ratio.min, ratio.max,
              !target ? "" : ratio.median >= 0.9 ? ", target >= 0.9: met"
                                                 : ", target >= 0.9: MISSED");
}

void PrintProcessing(const BenchResults& results) {
  if (results.processing.empty()) return;
  std::printf("\nprocessing (%lld input records of a task with nothing to restore, while another "
              "task restores %lld records on the WriteBatch path; and the same with nothing "
              "restoring; input %s):\n",
              static_cast<long long>(results.process_records),
              static_cast<long long>(results.process_restore_records),
              results.process_sizing.c_str());
  PrintPairRounds(results.processing, true);
  if (results.peer_processing.empty()) return;
  std::printf("Kafka Streams, the same pair (its own applications, same changelog and input):\n");
  PrintPairRounds(results.peer_processing, false);
  const Spread vs = Spread::Of(OursToPeer(results));
  if (vs.n == 0) {
    std::printf("  ours / Kafka Streams' (ratio to idle): n/a (no round in which both measured "
                "a ratio)\n");
    return;
  }
  std::printf("  ours / Kafka Streams' (ratio to idle): %.2f paired median of %d round(s) "
              "(%.2f..%.2f), target >= 1: %s\n",
              vs.median, vs.n, vs.min, vs.max, vs.median >= 1 ? "met" : "MISSED");
}

nlohmann::json Bytes(int64_t b) { return b >= 0 ? nlohmann::json(b) : nlohmann::json(); }

// Peak RSS per round (bytes), and for ours its rise over the RSS at the run's start; the
// rounds without a figure left out.
Spread PeakRss(const CaseSamples& c) {
  std::vector<double> v;
  for (const Measurement& m : c.rounds) {
    if (m.peak_rss_bytes >= 0) v.push_back(static_cast<double>(m.peak_rss_bytes));
  }
  return Spread::Of(v);
}

Spread RssRise(const CaseSamples& c) {
  std::vector<double> v;
  for (const Measurement& m : c.rounds) {
    if (m.peak_rss_bytes >= 0 && m.rss_at_start_bytes >= 0) {
      v.push_back(static_cast<double>(m.peak_rss_bytes - m.rss_at_start_bytes));
    }
  }
  return Spread::Of(v);
}

nlohmann::json RssJson(const Spread& s) { return s.n > 0 ? SpreadJson(s) : nlohmann::json(); }

nlohmann::json LoadsJson(const BenchResults& results) {
  nlohmann::json loads = nlohmann::json::array();
  for (const RoundLoad& l : results.loads) {
    loads.push_back({{"before", l.before >= 0 ? nlohmann::json(l.before) : nlohmann::json()},
                     {"after", l.after >= 0 ? nlohmann::json(l.after) : nlohmann::json()}});
  }
  return loads;
}

nlohmann::json CpuJson(const BenchResults& results) {
  nlohmann::json rounds = nlohmann::json::array();
  for (const RoundLoad& l : results.loads) {
    const auto cores = [](double v) { return v >= 0 ? nlohmann::json(v) : nlohmann::json(); };
    rounds.push_back({{"own_cores", cores(l.own_cores)}, {"others_cores", cores(l.others_cores)}});
  }
  return rounds;
}

std::string Mb(double bytes) { return fmt::format("{:.0f} MB", bytes / 1e6); }

// Peak RSS of our restorations from scratch and of Kafka Streams', medians over rounds.
void PrintMemory(const BenchResults& results) {
  bool any = false;
  for (const CaseSamples& c : results.cases) {
    const Spread peak = PeakRss(c);
    if (peak.n == 0) continue;
    if (!any) {
      std::printf("\npeak memory (RSS, median over rounds; ours in-process: the whole "
                  "benchmark process while the runtime ran, and its rise over what the process "
                  "held at the start; ours, own process: that child's whole life; Kafka "
                  "Streams: its JVM's whole life):\n");
      any = true;
    }
    const Spread rise = RssRise(c);
    std::printf("  %s%s%s\n", Pad(fmt::format("{} ({})", c.label, c.size), 62).c_str(),
                Pad("peak " + Mb(peak.median), 14).c_str(),
                rise.n > 0 ? fmt::format("rise {} over {}", Mb(rise.median),
                                         Mb(peak.median - rise.median))
                                 .c_str()
                           : "");
  }
}

void PrintLoads(const BenchResults& results) {
  std::printf("\nload average (1 min) before -> after each round:");
  for (size_t r = 0; r < results.loads.size(); ++r) {
    const RoundLoad& l = results.loads[r];
    std::printf(" %zu: %s -> %s;", r + 1,
                l.before >= 0 ? fmt::format("{:.2f}", l.before).c_str() : "n/a (unknown)",
                l.after >= 0 ? fmt::format("{:.2f}", l.after).c_str() : "n/a (unknown)");
  }
  std::printf(" %d cores\n", results.cores);
  std::printf("CPU used during each round, in cores (ours: this process, its children and the "
              "brokers serving it; others: the rest of the machine):");
  for (size_t r = 0; r < results.loads.size(); ++r) {
    const RoundLoad& l = results.loads[r];
    if (l.others_cores < 0) {
      std::printf(" %zu: n/a (unknown);", r + 1);
    } else {
      std::printf(" %zu: ours %.2f, others %.2f;", r + 1, l.own_cores, l.others_cores);
    }
  }
  std::printf("\n");
}

}  // namespace

std::optional<std::string> BusyReason(const BenchResults& results) {
  if (results.cores <= 0) return std::nullopt;
  const double others_max = kOthersShareMax * results.cores;
  for (size_t r = 0; r < results.loads.size(); ++r) {
    const RoundLoad& l = results.loads[r];
    if (l.others_cores >= 0) {
      if (l.others_cores <= others_max) continue;
      return fmt::format("the machine was busy: in round {} other processes used {:.2f} cores "
                         "on average, more than a quarter of its {} cores ({:.2f})",
                         r + 1, l.others_cores, results.cores, others_max);
    }
    // Unknown (no /proc): the load average, which counts the benchmark's own threads too.
    const double worst = std::max(l.before, l.after);
    if (worst > results.cores) {
      return fmt::format("the machine was busy: in round {} the load average (1 min) reached "
                         "{:.2f}, above its {} cores", r + 1, worst, results.cores);
    }
  }
  return std::nullopt;
}

double LoadAverage1() {
  double load[1] = {0};
  return getloadavg(load, 1) == 1 ? load[0] : -1;
}

namespace {
}  // namespace

Spread Spread::Of(std::vector<double> values) {
  Spread s;
  s.n = static_cast<int>(values.size());
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.min = values.front();
  s.max = values.back();
  const size_t mid = values.size() / 2;
  s.median = values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
  return s;
}

const CaseSamples* BenchResults::Find(const std::string& id) const {
  for (const CaseSamples& c : cases) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

std::string LoadAverages() {
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) != 3) return "load average unknown";
  return fmt::format("load average {:.2f} {:.2f} {:.2f}", load[0], load[1], load[2]);
}

std::string MachineDescription() {
  return fmt::format("{} cores, at the start: {}", sysconf(_SC_NPROCESSORS_ONLN), LoadAverages());
}

std::string RatioCell(const Ratio& r) {
  if (!r.available) return "n/a";
  return fmt::format("{:.2f} ({:.2f}..{:.2f}); of medians {:.2f}", r.paired, r.per_round.min,
                     r.per_round.max, r.median);
}

std::optional<Ratio> RatioOf(const BenchResults& results, const std::string& numerator,
                            const std::string& denominator) {
  const CaseSamples* num = results.Find(numerator);
  const CaseSamples* den = results.Find(denominator);
  if (num == nullptr || den == nullptr || num->rounds.empty() || den->rounds.empty()) {
    return std::nullopt;
  }
  const double den_median = RateSpread(*den).median;
  if (den_median <= 0) return std::nullopt;
  Ratio r{.numerator = numerator, .denominator = denominator, .available = true};
  r.median = RateSpread(*num).median / den_median;
  std::vector<double> per_round;
  for (size_t i = 0; i < std::min(num->rounds.size(), den->rounds.size()); ++i) {
    const double d = den->rounds[i].RecordsPerSecond();
    if (d > 0) per_round.push_back(num->rounds[i].RecordsPerSecond() / d);
  }
  r.per_round = Spread::Of(per_round);
  if (r.per_round.n == 0) return std::nullopt;
  r.paired = r.per_round.median;
  return r;
}

std::string OverlappedLimitOf(const BenchResults& results, const CaseSamples& c) {
  // The limits are measured on the main changelog: they compare with its restorations from
  // scratch and from its checkpoint, not with changelogs of other sizes.
  if (!c.id.starts_with("ours.scratch.") && !c.id.starts_with("ours.checkpoint.")) return "";
  if (c.id.ends_with(".writebatch")) return "limit.overlap.writebatch";
  // The default path: the limit of the path the store chose (in its first round).
  const bool bulk = !c.rounds.empty() && c.rounds[0].note.starts_with("bulk");
  return bulk ? "limit.overlap.bulk" : "limit.overlap.writebatch";
}

std::string PeerOf(const CaseSamples& c) {
  // "ours.<changelog>.<path>[.<variant>]" -> "peer.<changelog>"
  if (!c.id.starts_with("ours.")) return "";
  const size_t dot = c.id.find('.', 5);
  return "peer." + c.id.substr(5, dot == std::string::npos ? std::string::npos : dot - 5);
}

std::vector<Ratio> Ratios(const BenchResults& results) {
  std::vector<Ratio> ratios = {
      {"standard path (WriteBatch) / its overlapped limit", "ours.scratch.writebatch",
       "limit.overlap.writebatch", 0.95},
      {"standard path (WriteBatch) / Kafka Streams", "ours.scratch.writebatch", "peer.scratch",
       1.15},
      {"from scratch, default path / Kafka Streams", "ours.scratch.default", "peer.scratch", 3.0},
      {"from scratch, default path / its overlapped limit (bulk)", "ours.scratch.default",
       "limit.overlap.bulk", 0},
      {"from scratch, default path / standard path", "ours.scratch.default",
       "ours.scratch.writebatch", 0},
      {"from a checkpoint, default / WriteBatch path", "ours.checkpoint.default",
       "ours.checkpoint.writebatch", 0},
      {"Kafka Streams / overlapped limit (WriteBatch)", "peer.scratch", "limit.overlap.writebatch",
       0},
      // The library apart from the loop: the same WriteBatches through our RocksDB and through
      // Kafka Streams' rocksdbjni in its JVM (--peer only).
      {"WriteBatch alone: our RocksDB / Kafka Streams' (Java)", "limit.write.writebatch",
       "limit.write.writebatch.java", 0},
      {"Kafka Streams / its own WriteBatch limit (Java)", "peer.scratch",
       "limit.write.writebatch.java", 0},
      {"WriteBatch path, the oracle on / off", "ours.scratch.writebatch.oracle",
       "ours.scratch.writebatch", 0.95},
      // --guarantee exactly_once_v2: the transactional changelog (committed records per
      // second), against Kafka Streams under exactly_once_v2, and against the at-least-once
      // restorations of the same records in the same rounds (the cost of markers, aborted
      // records and read_committed).
      {"exactly_once_v2: standard path (WriteBatch) / Kafka Streams", "ours.eos.writebatch",
       "peer.eos", 1.15},
      {"exactly_once_v2: default path / Kafka Streams", "ours.eos.default", "peer.eos", 0},
      {"exactly_once_v2 / at-least-once, ours, standard path", "ours.eos.writebatch",
       "ours.scratch.writebatch", 0},
      {"exactly_once_v2 / at-least-once, ours, default path", "ours.eos.default",
       "ours.scratch.default", 0},
      {"exactly_once_v2 / at-least-once, Kafka Streams", "peer.eos", "peer.scratch", 0},
  };
  for (Ratio& r : ratios) {
    if (std::optional<Ratio> got = RatioOf(results, r.numerator, r.denominator)) {
      r.available = true;
      r.median = got->median;
      r.paired = got->paired;
      r.per_round = got->per_round;
    }
  }
  return ratios;
}

namespace {

// One case, its rounds and, for ours, its ratios.
nlohmann::json CaseJson(const BenchResults& results, const CaseSamples& c) {
  nlohmann::json rounds = nlohmann::json::array();
  for (const Measurement& m : c.rounds) {
    rounds.push_back({{"records", m.records},
                      {"seconds", m.seconds},
                      {"records_per_second", m.RecordsPerSecond()},
                      {"mb_per_second", m.MegabytesPerSecond()},
                      {"cpu_seconds_per_million", m.CpuSecondsPerMillion()},
                      {"contents_checked", m.contents_checked},
                      {"contents_ok", m.contents_ok},
                      {"peak_rss_bytes", Bytes(m.peak_rss_bytes)},
                      {"rss_at_start_bytes", Bytes(m.rss_at_start_bytes)},
                      {"note", m.note}});
  }
  nlohmann::json out = {
      {"id", c.id},
      {"label", c.label},
      {"changelog_records", c.size},
      {"records_per_second", SpreadJson(RateSpread(c))},
      {"mb_per_second",
       SpreadJson(SpreadOf(c, [](const Measurement& m) { return m.MegabytesPerSecond(); }))},
      {"cpu_seconds_per_million",
       SpreadJson(SpreadOf(c, [](const Measurement& m) { return m.CpuSecondsPerMillion(); }))},
      {"rounds", rounds}};
  out["peak_rss_bytes"] = RssJson(PeakRss(c));
  out["rss_rise_bytes"] = RssJson(RssRise(c));
  if (c.id.starts_with("ours.")) {
    for (const auto& [key, denominator] :
         {std::pair{"ratio_to_overlapped_limit", OverlappedLimitOf(results, c)},
          std::pair{"ratio_to_kafka_streams", PeerOf(c)}}) {
      const std::optional<Ratio> r = RatioOf(results, c.id, denominator);
      out[key] = r ? nlohmann::json{{"of", denominator},
                                    {"paired_median", r->paired},
                                    {"ratio_of_medians", r->median},
                                    {"per_round", SpreadJson(r->per_round)}}
                   : nlohmann::json();
    }
  }
  return out;
}

}  // namespace

nlohmann::json ToJson(const BenchResults& results) {
  nlohmann::json cases = nlohmann::json::array();
  for (const CaseSamples& c : results.cases) cases.push_back(CaseJson(results, c));
  nlohmann::json ratios = nlohmann::json::array();
  for (const Ratio& r : Ratios(results)) {
    if (!r.available) continue;
    ratios.push_back({{"name", r.name},
                      {"numerator", r.numerator},
                      {"denominator", r.denominator},
                      {"paired_median", r.paired},
                      {"ratio_of_medians", r.median},
                      {"per_round", SpreadJson(r.per_round)},
                      {"target", r.target > 0 ? nlohmann::json(r.target) : nlohmann::json()},
                      {"met", r.target > 0 ? nlohmann::json(r.paired >= r.target)
                                           : nlohmann::json()}});
  }
  const std::optional<std::string> busy = BusyReason(results);
  // A new field does not change the version; a removed field or a changed meaning does
  // (docs/USING.md, "JSON outputs").
  return {{"format", "restoresim-bench-restore"},
          {"version", 1},
          {"backend", results.backend},
          {"changelog", results.spec},
          {"machine", results.machine},
          {"cores", results.cores},
          {"load_average_1min", LoadsJson(results)},
          {"cpu_per_round", CpuJson(results)},
          {"reliable", !busy.has_value()},
          {"unreliable_reason", busy ? nlohmann::json(*busy) : nlohmann::json()},
          {"rounds", results.rounds},
          {"kafka_streams_version", results.peer_version},
          {"rocksdb", results.rocksdb},
          {"checkpoint_records", results.checkpoint_records},
          {"eos_changelog", results.eos_changelog.empty() ? nlohmann::json()
                                                          : nlohmann::json(results.eos_changelog)},
          {"seconds", results.seconds},
          {"cases", cases},
          {"ratios", ratios},
          {"processing", ProcessingJson(results)},
          {"problems", results.problems}};
}

void Report(const BenchResults& results, const RestoreBenchOptions& options) {
  const nlohmann::json json = ToJson(results);
  if (!options.json_path.empty()) std::ofstream(options.json_path) << json.dump(2) << "\n";
  if (!options.svg_path.empty()) std::ofstream(options.svg_path) << RestorePlotSvg(results);
  if (options.json) {
    std::printf("%s\n", json.dump(2).c_str());
    return;
  }
  PrintCases(results);
  std::printf("\n%-60s %-38s %-8s %s\n",
              "ratio of records/s: paired median (per-round range)", "; ratio of medians",
              "target", "");
  for (const Ratio& r : Ratios(results)) {
    if (!r.available) continue;
    std::printf("%-60s %-38s %-8s %s\n", r.name.c_str(), RatioCell(r).c_str(),
                r.target > 0 ? fmt::format(">= {:.2f}", r.target).c_str() : "",
                Verdict(r).c_str());
  }
  if (!results.eos_changelog.empty()) {
    std::printf("\nexactly_once_v2 changelog: %s\n", results.eos_changelog.c_str());
  }
  PrintProcessing(results);
  PrintMemory(results);
  PrintLoads(results);
  if (std::optional<std::string> busy = BusyReason(results)) {
    std::printf("UNRELIABLE: %s; a loaded run is not a result\n", busy->c_str());
  }
  for (const std::string& p : results.problems) std::printf("PROBLEM: %s\n", p.c_str());
  std::printf("\nour RocksDB: %s\n", results.rocksdb.c_str());
  std::printf("\n%s; %d rounds in %.0f s%s%s\n", results.machine.c_str(), results.rounds,
              results.seconds, options.svg_path.empty() ? "" : "; plot: ",
              options.svg_path.c_str());
}

}  // namespace restoresim::bench
