#include "sim/repro_document.h"

#include <algorithm>

#include <fmt/format.h>

namespace restoresim::sim {
namespace {

using Json = nlohmann::json;
using Event = Json::parse_event_t;

// Thrown from the parser callback to stop the parse at a limit.
struct LimitReached {
  std::string field;
  std::string problem;
};

// The parser callback: counts the entries of each open container and streams the top-level
// "choices" array out of the document.
class LimitedParse {
 public:
  // `choices_bound`: at most how many elements any array of the text may have.
  LimitedParse(const ReproDocumentLimits& limits, size_t choices_bound, ReproDocument& out)
      : limits_(limits), choices_bound_(std::min(choices_bound, limits.choices_max)), out_(out) {}

  bool operator()(int /*depth*/, Event event, Json& parsed) {
    switch (event) {
      case Event::key:
        if (open_.size() == 1) key_at_top_ = parsed.get<std::string>();
        return true;
      case Event::object_start:
      case Event::array_start: {
        const bool in_choices = InChoices();
        if (!open_.empty()) CountEntry();
        if (in_choices && !out_.bad_choice_index) {
          out_.bad_choice_index = open_.back().entries - 1;
          capture_at_ = open_.size() + 1;  // described once it is complete
        }
        const bool choices = event == Event::array_start && open_.size() == 1 &&
                             open_.front().object && key_at_top_ == "choices";
        if (choices) {  // the last "choices" wins, as in the document
          out_.choices.clear();
          out_.bad_choice_index.reset();
          // Once, to its bound: a vector grown by doubling held 1.5 to 3 times its size at
          // each reallocation (a 210 MB file peaked at 1.66 GB). Pages reserved but never
          // written take no memory.
          out_.choices.reserve(choices_bound_);
        }
        open_.push_back(Frame{.object = event == Event::object_start, .choices = choices});
        return true;
      }
      case Event::object_end:
      case Event::array_end: {
        const size_t depth = open_.size();
        open_.pop_back();
        if (depth == capture_at_) {
          out_.bad_choice_container = parsed.is_array()
                                          ? fmt::format("array of {} elements", parsed.size())
                                          : fmt::format("object with {} keys", parsed.size());
          capture_at_ = 0;
        }
        return !InChoices();  // an element of "choices" is not kept, even a bad one
      }
      case Event::value: {
        if (open_.empty()) return true;  // a document that is one value
        CountEntry();
        if (!open_.back().choices) return true;
        if (out_.bad_choice_index) return false;
        if (parsed.is_number_unsigned() ||
            (parsed.is_number_integer() && parsed.get<int64_t>() >= 0)) {
          out_.choices.push_back(parsed.get<uint64_t>());
        } else {
          out_.bad_choice_index = open_.back().entries - 1;
          out_.bad_choice = parsed;  // a primitive: cheap to copy
        }
        return false;
      }
    }
    return true;
  }

 private:
  struct Frame {
    bool object = false;
    bool choices = false;  // the top-level "choices" array
    size_t entries = 0;
  };

  bool InChoices() const { return !open_.empty() && open_.back().choices; }

  void CountEntry() {
    Frame& f = open_.back();
    const size_t limit = f.choices ? limits_.choices_max : limits_.entries_max;
    if (++f.entries <= limit) return;
    const std::string field = open_.size() == 1 ? std::string() : key_at_top_;
    throw LimitReached{field, fmt::format("more than {} {}: the limit is {}", limit,
                                          f.object ? "members" : "entries", limit)};
  }

  const ReproDocumentLimits& limits_;
  const size_t choices_bound_;
  ReproDocument& out_;
  std::vector<Frame> open_;
  std::string key_at_top_;  // the last key read in the top-level object
  size_t capture_at_ = 0;   // the depth of a bad "choices" element being read (0: none)
};

}  // namespace

bool ParseReproDocument(std::string_view text, const ReproDocumentLimits& limits,
                        ReproDocument& out, std::string& field, std::string& problem) {
  // Elements of an array are separated by commas: a bound on the choices, read before the parse.
  const size_t commas = static_cast<size_t>(std::count(text.begin(), text.end(), ','));
  LimitedParse callback(limits, commas + 1, out);
  try {
    out.doc = Json::parse(text.begin(), text.end(), std::ref(callback));
  } catch (const Json::exception& e) {
    field.clear();
    problem = fmt::format("not JSON: {}", e.what());  // names the byte, line and column
    return false;
  } catch (const LimitReached& limit) {
    field = limit.field;
    problem = limit.problem;
    return false;
  }
  return true;
}

}  // namespace restoresim::sim
