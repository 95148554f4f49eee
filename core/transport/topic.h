// Topic: a Kafka topic's name as an interned, immutable value (core/util/interned.h). A run
// copies TopicPartitions on nearly every event and container insert, and changelog names
// ("app-store-changelog") are too long for the small-string buffer, so a std::string topic cost
// an allocation per copy; a Topic copies one word and compares equal by address. Orderings
// compare the contents, never addresses, so iteration orders and trace hashes are those of
// the std::string it replaces. Converts to and from std::string and std::string_view so that
// code written for the string reads the same.
//
// Kafka counterpart: the String topic of org.apache.kafka.common.TopicPartition.
//
// Thread-safety: Topic is a value; interning is thread-safe.
#ifndef RESTORESIM_CORE_TRANSPORT_TOPIC_H_
#define RESTORESIM_CORE_TRANSPORT_TOPIC_H_

#include <compare>
#include <ostream>
#include <string>
#include <string_view>

#include "core/util/interned.h"
#include "fmt/format.h"

namespace restoresim {

class Topic {
 public:
  Topic() : s_(InternedEmptyString()) {}
  Topic(std::string_view s) : s_(InternString(s)) {}  // NOLINT: implicit by design
  Topic(const char* s) : Topic(std::string_view(s)) {}  // NOLINT
  Topic(const std::string& s) : Topic(std::string_view(s)) {}  // NOLINT

  operator const std::string&() const { return *s_; }  // NOLINT
  operator std::string_view() const { return *s_; }  // NOLINT
  const std::string& str() const { return *s_; }
  std::string_view view() const { return *s_; }
  const char* c_str() const { return s_->c_str(); }
  bool empty() const { return s_->empty(); }
  size_t size() const { return s_->size(); }
  // The interned string's identity: a hash key for lookups only, never an ordering.
  const void* id() const { return s_; }

  // Interned: equal names have one address.
  friend bool operator==(Topic a, Topic b) { return a.s_ == b.s_; }
  friend bool operator==(Topic a, std::string_view b) { return *a.s_ == b; }
  friend bool operator==(Topic a, const std::string& b) { return *a.s_ == b; }
  friend bool operator==(Topic a, const char* b) { return *a.s_ == b; }
  // By contents, never by address: the order std::string had.
  friend std::strong_ordering operator<=>(Topic a, Topic b) {
    return a.s_ == b.s_ ? std::strong_ordering::equal : *a.s_ <=> *b.s_;
  }
  friend std::strong_ordering operator<=>(Topic a, std::string_view b) {
    return std::string_view(*a.s_) <=> b;
  }
  friend std::strong_ordering operator<=>(Topic a, const std::string& b) { return *a.s_ <=> b; }
  friend std::ostream& operator<<(std::ostream& out, Topic t) { return out << *t.s_; }

 private:
  const std::string* s_;
};

}  // namespace restoresim

template <>
struct fmt::formatter<restoresim::Topic> : fmt::formatter<std::string_view> {
  template <typename Ctx>
  auto format(restoresim::Topic t, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(t.view(), ctx);
  }
};

#endif  // RESTORESIM_CORE_TRANSPORT_TOPIC_H_
