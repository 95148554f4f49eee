// standby_progress: after every step of a restore thread, the standby progress it publishes for
// its stream thread (Kafka's StoreChangelogReader counting records restored into standby tasks,
// read as the client's standby update metrics) equals the records the oracle saw it restore into
// changelogs registered to standby tasks since its changelog reader was made.
#include <fmt/format.h>

#include "properties/checker.h"

namespace restoresim::properties {
namespace {

class StandbyProgressChecker final : public Checker {
 public:
  explicit StandbyProgressChecker(OracleContext& c) : Checker(c, "standby_progress") {}

  // The owner's type as its registration in the ledger has it (the batch's own type, from the
  // reader, only for a changelog the ledger does not know).
  void OnRestoredBatch(std::string_view reader, const TopicPartition& changelog,
                       const TaskIncarnation&, TaskType type, int64_t,
                       int64_t records) override {
    const Registration* reg = ledger().RegistrationOf(reader, changelog);
    const TaskType owner_type = reg != nullptr ? reg->type : type;
    if (owner_type != TaskType::kStandby) return;
    auto it = restored_.find(reader);
    if (it == restored_.end()) it = restored_.emplace(Str(reader), 0).first;
    it->second += records;
  }

  // A restore thread's reader is made again (a restarted instance): its count starts over.
  void OnReaderDestroyed(std::string_view reader) override { restored_.erase(Str(reader)); }

  void OnStandbyProgressPublished(std::string_view restore_thread, int64_t records) override {
    auto it = restored_.find(restore_thread);
    const int64_t seen = it == restored_.end() ? 0 : it->second;
    if (records != seen) {
      Violation(Str(restore_thread),
                fmt::format("publishes {} records written to standby stores after a step, but "
                            "its reader restored {} records of standby changelogs",
                            records, seen));
    }
  }

 private:
  // Per restore thread (its reader has its name): standby records restored so far.
  std::map<std::string, int64_t, std::less<>> restored_;
};

RESTORESIM_CHECKER(230, StandbyProgressChecker);

}  // namespace

}  // namespace restoresim::properties
