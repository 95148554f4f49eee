// The registry's selection of programs (`--scenario`): names, globs and comma-separated lists,
// in one order whatever the list's, and an error naming the element that selects nothing.
#include "sim/program.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace restoresim::sim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const ProgramRegistry& Registry() {
  static const ProgramRegistry* registry = []() {
    auto* r = new ProgramRegistry();
    for (const char* name : {"demo.abba_deadlock", "demo.lost_update", "scenario.restore",
                             "scenario.restore_then_process", "bug.create_before_close"}) {
      const absl::Status s = r->Add({.name = name, .body = [](RunEnv&) {}});
      if (!s.ok()) std::abort();
    }
    return r;
  }();
  return *registry;
}

std::vector<std::string> Names(std::string_view pattern) {
  absl::StatusOr<std::vector<const Program*>> selected = Registry().Select(pattern);
  EXPECT_TRUE(selected.ok()) << pattern << ": " << selected.status();
  std::vector<std::string> names;
  if (selected.ok()) {
    for (const Program* p : *selected) names.push_back(p->name);
  }
  return names;
}

TEST(GlobMatchesTest, StarAndQuestionMarkMatchAsInAShell) {
  EXPECT_TRUE(GlobMatches("demo.*", "demo.lost_update"));
  EXPECT_TRUE(GlobMatches("*", ""));
  EXPECT_TRUE(GlobMatches("*restore*", "scenario.restore_then_process"));
  EXPECT_TRUE(GlobMatches("scenario.restor?", "scenario.restore"));
  EXPECT_TRUE(GlobMatches("a*b*c", "aXbYbZc"));
  EXPECT_TRUE(GlobMatches("demo.lost_update", "demo.lost_update"));
  EXPECT_FALSE(GlobMatches("demo.lost", "demo.lost_update"));
  EXPECT_FALSE(GlobMatches("scenario.restor?", "scenario.restore_then_process"));
  EXPECT_FALSE(GlobMatches("?", ""));
  EXPECT_FALSE(GlobMatches("a*b*c", "aXbYc_"));
  EXPECT_FALSE(GlobMatches("", "demo"));
}

TEST(ProgramSelectTest, NamesGlobsAndListsSelectEachProgramOnceByName) {
  EXPECT_EQ(Names("all").size(), 5u);
  EXPECT_THAT(Names("demo.lost_update"), ElementsAre("demo.lost_update"));
  EXPECT_THAT(Names("demo.*"), ElementsAre("demo.abba_deadlock", "demo.lost_update"));
  EXPECT_THAT(Names("scenario.restor?"), ElementsAre("scenario.restore"));
  // Any order and repetition in the list gives the same selection, by name.
  const std::vector<std::string> expected = {"bug.create_before_close", "demo.lost_update",
                                             "scenario.restore",
                                             "scenario.restore_then_process"};
  EXPECT_EQ(Names("scenario.*,demo.lost_update,bug.*"), expected);
  EXPECT_EQ(Names("bug.*,demo.lost_update,scenario.restore*,*restore"), expected);
  EXPECT_EQ(Names("all,demo.*").size(), 5u);
}

TEST(ProgramSelectTest, AnElementThatSelectsNothingIsAnErrorNamingIt) {
  for (const auto& [pattern, element] : std::vector<std::pair<std::string, std::string>>{
           {"nosuch", "'nosuch'"},
           {"demo.*,nosuch.*", "'nosuch.*' (in 'demo.*,nosuch.*')"},
           {"demo.lost_update,", "'' (in 'demo.lost_update,')"},
           {"demo.lost", "'demo.lost'"},
           {"", "''"}}) {
    const absl::StatusOr<std::vector<const Program*>> s = Registry().Select(pattern);
    ASSERT_FALSE(s.ok()) << pattern;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(std::string(s.status().message()), HasSubstr("no scenario matches " + element));
    EXPECT_THAT(std::string(s.status().message()), HasSubstr("bug.*, demo.*, scenario.*"));
  }
}

}  // namespace
}  // namespace restoresim::sim
