#include "core/runtime/count_topology.h"

#include <charconv>

#include <fmt/format.h>

#include "absl/container/flat_hash_set.h"
#include "core/util/check.h"

namespace restoresim {
namespace {

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

// Called per store on hot paths (a task's changelogs are derived, not stored). A small
// direct-mapped cache keyed by the views' addresses answers repeated calls; the contents are
// compared too, so a buffer freed and reused for another name is only a miss. A miss builds the
// name in a per-thread buffer (no allocation once it has grown) and interns it.
Topic ChangelogTopic(std::string_view application_id, std::string_view store_name) {
  struct Slot {
    const char* application_id = nullptr;
    const char* store_name = nullptr;
    Topic topic;
  };
  constexpr size_t kSlots = 16;
  thread_local Slot recent[kSlots];
  const uintptr_t key = reinterpret_cast<uintptr_t>(application_id.data()) ^
                        (reinterpret_cast<uintptr_t>(store_name.data()) >> 3);
  Slot& slot = recent[(key >> 3) % kSlots];
  if (slot.application_id == application_id.data() && slot.store_name == store_name.data() &&
      IsChangelogTopicOf(slot.topic, application_id, store_name)) {
    return slot.topic;
  }
  constexpr std::string_view kSuffix = "-changelog";
  thread_local std::string name;
  name.clear();
  name.append(application_id).append(1, '-').append(store_name).append(kSuffix);
  slot = Slot{.application_id = application_id.data(),
              .store_name = store_name.data(),
              .topic = Topic(name)};
  return slot.topic;
}

bool IsChangelogTopicOf(std::string_view topic, std::string_view application_id,
                        std::string_view store_name) {
  constexpr std::string_view kSuffix = "-changelog";
  return topic.size() == application_id.size() + 1 + store_name.size() + kSuffix.size() &&
         topic.starts_with(application_id) && topic[application_id.size()] == '-' &&
         topic.substr(application_id.size() + 1, store_name.size()) == store_name &&
         topic.ends_with(kSuffix);
}

std::optional<KeyValueWrite> CountUpdate(const ConsumerRecord& input,
                                         const std::optional<std::string>& current) {
  if (!input.value.has_value()) return KeyValueWrite{input.key, std::nullopt};
  const std::optional<int64_t> delta = ParseInt(*input.value);
  if (!delta) return std::nullopt;
  const int64_t base = current ? ParseInt(*current).value_or(0) : 0;
  return KeyValueWrite{input.key, std::to_string(base + *delta)};
}

std::optional<KeyValueWrite> StoreUpdate(std::string_view store, const ConsumerRecord& input,
                                         const std::optional<std::string>& current) {
  if (store == kLatestStoreName) return KeyValueWrite{input.key, input.value};
  return CountUpdate(input, current);
}

std::map<std::string, std::string> ReferenceLatest(const std::vector<ConsumerRecord>& inputs,
                                                   std::map<std::string, std::string> initial) {
  std::map<std::string, std::string> latest = std::move(initial);
  for (const ConsumerRecord& r : inputs) {
    if (r.value) {
      latest[r.key] = *r.value;
    } else {
      latest.erase(r.key);
    }
  }
  return latest;
}

std::map<std::string, std::string> ReferenceCounts(const std::vector<ConsumerRecord>& inputs,
                                                   std::map<std::string, std::string> initial) {
  std::map<std::string, std::string> counts = std::move(initial);
  for (const ConsumerRecord& r : inputs) {
    auto it = counts.find(r.key);
    std::optional<std::string> current;
    if (it != counts.end()) current = it->second;
    std::optional<KeyValueWrite> w = CountUpdate(r, current);
    if (!w) continue;
    if (w->value) {
      counts[w->key] = *w->value;
    } else {
      counts.erase(w->key);
    }
  }
  return counts;
}

// From the newest record back: a key's last record decides it, so each key is looked up in a
// hash set once per record and copied into the result at most once (a counts changelog
// updates a few keys many times over).
std::map<std::string, std::string> FoldChangelog(const std::vector<ConsumerRecord>& changelog) {
  absl::flat_hash_set<std::string_view> decided;
  std::map<std::string, std::string> contents;
  for (auto r = changelog.rbegin(); r != changelog.rend(); ++r) {
    if (!decided.insert(r->key).second) continue;
    if (r->value) contents.emplace(r->key, *r->value);
  }
  RS_CHECK(contents.size() <= decided.size(), "fold: {} keys from {} decided", contents.size(),
           decided.size());
  return contents;
}

}  // namespace restoresim
