// The topology the runtime runs: a keyed aggregate over an input topic, small enough to check
// exactly and rich enough to make restoration rebuild updates and deletes.
//
// Each input record (key, value) updates the store "counts" of its task:
//   value = decimal integer d   counts[key] += d   (written to the store and its changelog)
//   value = tombstone           counts[key] erased (a tombstone in the changelog)
// and, when the topology has it, the store "latest" (tasks with several stores on several
// changelogs):
//   any value v                 latest[key] = v    (a malformed one too: it is a value)
//   value = tombstone           latest[key] erased
// Each store's changelog topic is "<application.id>-<store>-changelog", one partition per
// input partition. ReferenceCounts and ReferenceLatest fold the same input into the expected
// store contents.
//
// Thread-safety: stateless.
#ifndef RESTORESIM_CORE_RUNTIME_COUNT_TOPOLOGY_H_
#define RESTORESIM_CORE_RUNTIME_COUNT_TOPOLOGY_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/state/key_value_store.h"
#include "core/transport/transport.h"

namespace restoresim {

inline constexpr std::string_view kCountsStoreName = "counts";
inline constexpr std::string_view kLatestStoreName = "latest";

// Interned (core/transport/topic.h); repeated calls with the same long-lived strings (a task's
// application id and store names) are answered from a small per-thread cache.
Topic ChangelogTopic(std::string_view application_id, std::string_view store_name);
// Whether `topic` is ChangelogTopic(application_id, store_name), without building it.
bool IsChangelogTopicOf(std::string_view topic, std::string_view application_id,
                        std::string_view store_name);

// What processing one input record writes; nullopt when the record is malformed (skipped and
// counted, as Kafka Streams' default deserialization handler logs and continues).
std::optional<KeyValueWrite> CountUpdate(const ConsumerRecord& input,
                                         const std::optional<std::string>& current);

// What processing one input record writes to the store `store` (counts or latest); nullopt
// when nothing (a malformed count).
std::optional<KeyValueWrite> StoreUpdate(std::string_view store, const ConsumerRecord& input,
                                         const std::optional<std::string>& current);

// The expected contents of a latest store that held `initial` after processing `inputs`.
std::map<std::string, std::string> ReferenceLatest(
    const std::vector<ConsumerRecord>& inputs,
    std::map<std::string, std::string> initial = {});

// The expected contents of a counts store that held `initial` (e.g. restored from its
// changelog) after processing `inputs` in order.
std::map<std::string, std::string> ReferenceCounts(
    const std::vector<ConsumerRecord>& inputs,
    std::map<std::string, std::string> initial = {});

// The contents a store must hold after restoring `changelog` records in order.
std::map<std::string, std::string> FoldChangelog(const std::vector<ConsumerRecord>& changelog);

}  // namespace restoresim

#endif  // RESTORESIM_CORE_RUNTIME_COUNT_TOPOLOGY_H_
