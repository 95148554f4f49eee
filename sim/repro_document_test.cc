// ParseReproDocument: limits hold while the JSON is read (the parse stops at the first entry past
// one, before the rest of the file is looked at), and "choices" is streamed out of the document.
#include "sim/repro_document.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace restoresim::sim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr ReproDocumentLimits kSmall{.choices_max = 5, .entries_max = 3};

TEST(ReproDocumentTest, StreamsChoicesOutOfTheDocument) {
  ReproDocument out;
  std::string field, problem;
  ASSERT_TRUE(ParseReproDocument(R"({"seed": 1, "choices": [3, 0, 18446744073709551615]})",
                                 kSmall, out, field, problem))
      << problem;
  EXPECT_THAT(out.choices, ElementsAre(3, 0, UINT64_MAX));
  EXPECT_TRUE(out.doc["choices"].is_array());
  EXPECT_TRUE(out.doc["choices"].empty()) << "8 bytes a choice, not a JSON node";
  EXPECT_EQ(out.doc["seed"], 1);
  EXPECT_FALSE(out.bad_choice_index.has_value());
}

// Issue 25: the choices are stored once, in a vector reserved from the text's commas (a bound
// on any array's length), not grown by doubling: a 210 MB file of choices peaked at 1.66 GB.
TEST(ReproDocumentTest, ReservesTheChoicesOnceFromTheText) {
  std::string text = R"({"seed": 1, "choices": [0)";
  for (int i = 1; i < 1000; ++i) text += ", " + std::to_string(i % 3);
  text += "]}";
  ReproDocument out;
  std::string field, problem;
  ASSERT_TRUE(ParseReproDocument(text, ReproDocumentLimits{.choices_max = 5000, .entries_max = 3},
                                 out, field, problem))
      << problem;
  ASSERT_EQ(out.choices.size(), 1000u);
  // 1,001 commas (one between fields): a doubling vector would hold 1,024.
  EXPECT_LE(out.choices.capacity(), 1002u);
  // Never past the limit, whatever the text's commas.
  ReproDocument limited;
  const std::string commas = R"({"x": ")" + std::string(100000, ',') + R"(", "choices": [1, 2]})";
  ASSERT_TRUE(ParseReproDocument(commas, kSmall, limited, field, problem)) << problem;
  EXPECT_LE(limited.choices.capacity(), kSmall.choices_max);
}

TEST(ReproDocumentTest, StopsAtTheLimitBeforeReadingTheRest) {
  ReproDocument out;
  std::string field, problem;
  // The sixth choice is past the limit; what follows is not even JSON, and is never read.
  EXPECT_FALSE(ParseReproDocument(R"({"choices": [0, 0, 0, 0, 0, 0, this is not JSON)", kSmall,
                                  out, field, problem));
  EXPECT_EQ(field, "choices");
  EXPECT_THAT(problem, HasSubstr("more than 5 entries: the limit is 5"));
  EXPECT_FALSE(ParseReproDocument(R"({"expected": {"failure": {"notes": ["a", "b", "c", "d", )",
                                  kSmall, out, field, problem));
  EXPECT_EQ(field, "expected");
  EXPECT_THAT(problem, HasSubstr("more than 3 entries"));
  EXPECT_FALSE(ParseReproDocument(R"({"a": 1, "b": 2, "c": 3, "d": 4})", kSmall, out, field,
                                  problem));
  EXPECT_THAT(problem, HasSubstr("more than 3 members"));
}

TEST(ReproDocumentTest, KeepsTheFirstBadChoiceAndWhatItWas) {
  ReproDocument out;
  std::string field, problem;
  ASSERT_TRUE(ParseReproDocument(R"({"choices": [1, -2, "x"]})", kSmall, out, field, problem));
  EXPECT_EQ(out.bad_choice_index, 1u);
  EXPECT_EQ(out.bad_choice, -2);
  ReproDocument nested;
  ASSERT_TRUE(ParseReproDocument(R"({"choices": [1, [[2], 3]]})", kSmall, nested, field,
                                 problem));
  EXPECT_EQ(nested.bad_choice_index, 1u);
  EXPECT_EQ(nested.bad_choice_container, "array of 2 elements");
  EXPECT_TRUE(nested.doc["choices"].empty());
}

TEST(ReproDocumentTest, TheLastChoicesKeyWinsAsInTheDocument) {
  ReproDocument out;
  std::string field, problem;
  ASSERT_TRUE(ParseReproDocument(R"({"choices": [1, "x"], "choices": [7]})", kSmall, out, field,
                                 problem));
  EXPECT_THAT(out.choices, ElementsAre(7));
  EXPECT_FALSE(out.bad_choice_index.has_value());
  // "choices" below the top level is an ordinary array.
  ReproDocument inner;
  ASSERT_TRUE(ParseReproDocument(R"({"config": {"choices": [1, 2]}})", kSmall, inner, field,
                                 problem));
  EXPECT_TRUE(inner.choices.empty());
  EXPECT_EQ(inner.doc["config"]["choices"].size(), 2u);
}

TEST(ReproDocumentTest, NotJsonNamesWhere) {
  ReproDocument out;
  std::string field, problem;
  EXPECT_FALSE(ParseReproDocument("{\"seed\": }", kSmall, out, field, problem));
  EXPECT_THAT(problem, HasSubstr("not JSON"));
  EXPECT_THAT(problem, HasSubstr("column"));
}

}  // namespace
}  // namespace restoresim::sim
