// Reading a repro file's JSON with its limits enforced while it is parsed, not after: every
// array and object is cut off (the parse stops) at its limit, and the elements of the top-level
// "choices" array — the only part that grows with a run — are taken out of the document as they
// are read, 8 bytes each instead of a JSON node each (a 200 MB file of choices once took
// 4.4 GB as a document). Used by ParseRepro (repro.cc); the field checks stay there.
#ifndef RESTORESIM_SIM_REPRO_DOCUMENT_H_
#define RESTORESIM_SIM_REPRO_DOCUMENT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace restoresim::sim {

struct ReproDocument {
  nlohmann::json doc;  // the file, with the top-level "choices" array left empty
  // Its elements, in order, up to the first that is not a non-negative integer.
  std::vector<uint64_t> choices;
  // That element, if any: its index, and the value (a number, string, ...) or, for an array or
  // object, what it was ("array of 2 elements").
  std::optional<size_t> bad_choice_index;
  nlohmann::json bad_choice;
  std::string bad_choice_container;
};

struct ReproDocumentLimits {
  size_t choices_max = 0;  // elements of the top-level "choices" array
  size_t entries_max = 0;  // elements or members of any other array or object
};

// The document, or false with `field` ("" for the whole file) and `problem` filled in: not
// JSON (the byte, line and column), or a container past its limit.
bool ParseReproDocument(std::string_view text, const ReproDocumentLimits& limits,
                        ReproDocument& out, std::string& field, std::string& problem);

}  // namespace restoresim::sim

#endif  // RESTORESIM_SIM_REPRO_DOCUMENT_H_
