#include "core/util/interned.h"

#include <cstdint>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_set.h"

namespace restoresim {
namespace {

// The process's strings. node_hash_set: an element never moves, so its address is the handle.
struct Table {
  std::mutex mu;
  absl::node_hash_set<std::string> strings;
};

Table& Shared() {
  static Table* table = new Table();  // never destroyed: holders outlive static destructors
  return *table;
}

}  // namespace

const std::string* InternedEmptyString() {
  static const std::string* empty = InternString("");
  return empty;
}

// The hot path: callers intern views of the same long-lived buffers again and again (a
// thread's name, a reader's), so a small direct-mapped cache keyed by the view's address and
// length answers most calls without hashing; the contents are compared too, so a buffer freed
// and reused for another string is only a miss. Then a per-thread hash map, then the shared
// table.
const std::string* InternString(std::string_view s) {
  struct Slot {
    const char* data = nullptr;
    size_t size = 0;
    const std::string* interned = nullptr;
  };
  constexpr size_t kSlots = 64;
  thread_local Slot recent[kSlots];
  Slot& slot = recent[((reinterpret_cast<uintptr_t>(s.data()) >> 3) ^ s.size()) % kSlots];
  if (slot.data == s.data() && slot.size == s.size() && slot.interned != nullptr &&
      std::string_view(*slot.interned) == s) {
    return slot.interned;
  }
  // Keys view the shared table's strings, which never move or die.
  thread_local absl::flat_hash_map<std::string_view, const std::string*> cache;
  const std::string* interned;
  if (auto it = cache.find(s); it != cache.end()) {
    interned = it->second;
  } else {
    Table& table = Shared();
    {
      std::lock_guard<std::mutex> lock(table.mu);
      interned = &*table.strings.emplace(s).first;
    }
    cache.emplace(std::string_view(*interned), interned);
  }
  slot = Slot{.data = s.data(), .size = s.size(), .interned = interned};
  return interned;
}

}  // namespace restoresim
