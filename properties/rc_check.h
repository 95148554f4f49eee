// Runs a rapidcheck property as part of the current gtest, with a fixed seed and a fixed number
// of cases, so that a CI run is reproducible and its length is known. RC_PARAMS still wins for
// every key it sets:
//
//   RC_PARAMS="seed=42" build/properties/properties_changelog_reader_model_test
//   RC_PARAMS="max_success=1000 seed=7" build/scenarios/scenarios_scenario_properties_test
//   RC_PARAMS="reproduce=BAAAA..." ...   (the line a failure prints: replays that one case)
//   RC_PARAMS="verbose_progress=1 verbose_shrinking=1" ...
//
// A failure prints the shrunk counterexample and the seed it was found with.
#ifndef RESTORESIM_PROPERTIES_RC_CHECK_H_
#define RESTORESIM_PROPERTIES_RC_CHECK_H_

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>

namespace restoresim::properties {

// The seed every property starts from unless RC_PARAMS names one.
inline constexpr uint64_t kDefaultRcSeed = 20240601;

// Checks `testable` (a callable using rapidcheck's `*gen` and RC_ assertions) over
// `max_success` cases; a failure fails the current gtest with the shrunk counterexample.
template <typename Testable>
void CheckProperty(int max_success, Testable&& testable) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  const char* env = std::getenv("RC_PARAMS");
  const std::string given = env == nullptr ? "" : env;
  if (given.find("seed") == std::string::npos) {
    // Before rapidcheck reads its configuration (once per process), so the seed it prints
    // is the one used.
    setenv("RC_PARAMS", (given + " seed=" + std::to_string(kDefaultRcSeed)).c_str(), 1);
  }
  const rc::detail::Configuration& config = rc::detail::configuration();
  rc::detail::TestParams params = config.testParams;
  if (given.find("seed") == std::string::npos) params.seed = kDefaultRcSeed;
  if (given.find("max_success") == std::string::npos) params.maxSuccess = max_success;
  // A reproduce string replays through the configuration (it names the case to run).
  const rc::detail::TestResult result =
      config.reproduce.empty()
          ? rc::detail::checkTestable(std::forward<Testable>(testable), metadata, params)
          : rc::detail::checkTestable(std::forward<Testable>(testable), metadata);
  if (!result.template is<rc::detail::SuccessResult>()) {
    std::ostringstream ss;
    rc::detail::printResultMessage(result, ss);
    FAIL() << ss.str() << "\n(rapidcheck seed " << params.seed
           << "; rerun another with RC_PARAMS=\"seed=N\")";
  }
}

}  // namespace restoresim::properties

#endif  // RESTORESIM_PROPERTIES_RC_CHECK_H_
