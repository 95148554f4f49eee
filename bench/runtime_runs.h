// Our runtime (core/runtime/runtime.h) on real threads over a benchmark Backend, with RocksDB
// stores in a state directory on disk: the restorations and the processing runs the restore
// benchmark times.
//
// A restoration is timed the way the Kafka Streams peer times its own, by a
// StateRestoreListener: from the first OnRestoreStart to the OnRestoreEnd of the last
// restoring changelog (the store has every record by then: a bulk restoration writes its last
// chunk before the end is reported), with the process's CPU time over the same span. The
// runtime is then closed and every store on disk is compared with the digest it must have.
//
// Thread-safety: one run at a time per Backend (each run starts and stops a whole runtime).
#ifndef RESTORESIM_BENCH_RUNTIME_RUNS_H_
#define RESTORESIM_BENCH_RUNTIME_RUNS_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/backend.h"
#include "bench/bench_results.h"
#include "bench/changelog_data.h"
#include "bench/measure.h"
#include "core/state/rocksdb_store.h"

namespace restoresim::bench {

// An application: its id (the group, and the changelog "<id>-counts-changelog"), its input.
struct AppSpec {
  std::string app_id;
  std::string input_topic;
  int32_t partitions = 1;
  std::string Changelog() const;
};

struct RuntimeOptions {
  RocksDbStoreOptions store;
  int32_t restore_max_poll_records = 1000;  // restore.consumer.max.poll.records
  // restoresim.restore.share.while.processing.percent; -1: the runtime's default.
  int32_t restore_share_while_processing = -1;
  double timeout_s = 600;
  // processing.guarantee=exactly_once_v2: the restore consumer reads committed records only
  // and restores to the last stable offset; at-least-once otherwise.
  bool exactly_once = false;
  // The invariant oracle judges the run online (an EventRecorder over a StandaloneJudge, store
  // contents not read: the soak's set-up); a violation fails the run. Off: no observer at all.
  bool oracle = false;
  // Reset the process's peak RSS at the runtime's start (Measurement::peak_rss_bytes); off in
  // a process of its own, whose peak then covers its whole life.
  bool reset_peak_rss = true;
};

// Restores `app` into `state_dir` (empty: from scratch; or holding stores and checkpoints).
// `restoring` is how many changelog partitions have records to restore; `expected[p]` what
// partition p's store must hold afterwards (empty: not checked).
absl::StatusOr<Measurement> RunRestore(Backend& backend, const AppSpec& app,
                                       const std::string& state_dir,
                                       const RuntimeOptions& options, int32_t restoring,
                                       const std::vector<StoreDigest>& expected);

// A processing run: the runtime processes `input_records` input records (of partitions with
// empty changelogs) while, when `restoring` > 0, other tasks restore. Times are seconds since
// Runtime::Start.
struct ProcessingRun {
  double first_processed_s = -1;  // -1: none processed
  double restore_start_s = -1;    // -1: nothing restored (or restoring == 0)
  double restore_end_s = -1;
  int64_t restored = 0;           // by the restoration's end
  int64_t input_records = 0;      // the input it had (0: unknown, its last sample's count)
  std::vector<std::pair<double, int64_t>> processed;  // samples: (time, records processed)
  // Records processed per second over [from_s, to_s], interpolating the samples; nullopt for an
  // empty or reversed window, or one ending after the last sample.
  std::optional<double> RateBetween(double from_s, double to_s) const;
  // When the last input record was processed (the first sample that has them all; -1: never,
  // as when the run stopped before).
  double DoneAt() const;
  int64_t ProcessedAt(double t_s) const;
};
// When a processing run may stop before its input is all processed (the pair's rates need no
// more): at the restoration's end (the run with one), or `after_first_s` after the first
// processed record (the idle run: as long as the other run's window lasted, and a margin).
struct ProcessingStop {
  bool at_restore_end = false;
  double after_first_s = -1;  // -1: never
};
absl::StatusOr<ProcessingRun> RunProcessing(Backend& backend, const AppSpec& app,
                                            const std::string& state_dir,
                                            const RuntimeOptions& options, int32_t restoring,
                                            int64_t input_records, ProcessingStop stop = {});

// How big the processing pair's restoration and input must be for the two to overlap by at
// least kMinPairOverlapS, from an untimed run (`run`) restoring `restore` records with `input`
// records of input:
//  * the restoration must end kMinPairOverlapS after the first processed record: when it ended
//    sooner, its changelog grows at the rate it restored (times 1.5: restorations and the time
//    to the first processed record vary from run to run), at most to `restore_cap`;
//  * the processing must outlast the restoration: 3x the records processed per second times the
//    time from the first processed record to the (estimated) end of the restoration (3x: the
//    idle run processes faster, by up to 1.5x as measured so far, and a margin of 2), at least
//    `input`, at most `input_cap`.
// Sizes stay as they were where the run cannot say (nothing processed, nothing timed).
// 3 s since issue 27's second run: a stream thread's first second processes at under half its
// later rate (its fetches ramp up), so a 1 s window measured mostly the ramp, and with the
// restore thread yielding to processing the restoration's end moved by a second from round to
// round.
inline constexpr double kMinPairOverlapS = 3.0;
struct PairSizing {
  int64_t restore = 0;
  int64_t input = 0;
};
PairSizing SizeProcessingPair(const ProcessingRun& run, PairSizing given, PairSizing cap);

// One round of the processing pair from its two runs (bench_results.h says what it holds).
ProcessingSample PairSample(const ProcessingRun& restoring, const ProcessingRun& idle);

}  // namespace restoresim::bench

#endif  // RESTORESIM_BENCH_RUNTIME_RUNS_H_
