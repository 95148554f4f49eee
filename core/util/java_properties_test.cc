#include "core/util/java_properties.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

namespace restoresim {
namespace {

using ::testing::HasSubstr;
using Properties = std::map<std::string, std::string>;

Properties Parse(std::string_view text) {
  absl::StatusOr<Properties> p = ParseJavaProperties(text);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : Properties{};
}

TEST(JavaPropertiesTest, KeyAndValueAreSeparatedByEqualsColonOrWhitespace) {
  EXPECT_EQ(Parse("a=1\nb: 2\nc 3\nd   =   4\ne\n"),
            (Properties{{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}, {"e", ""}}));
}

TEST(JavaPropertiesTest, CommentsAndBlankLinesAreSkipped) {
  EXPECT_EQ(Parse("# a comment\n  ! another\n\n\n   \nkey=value # not a comment\n"),
            (Properties{{"key", "value # not a comment"}}));
}

TEST(JavaPropertiesTest, AnOddNumberOfTrailingBackslashesContinuesTheLine) {
  EXPECT_EQ(Parse("list=a,\\\n    b,\\\n    c\nnext=\\\\\n"),
            (Properties{{"list", "a,b,c"}, {"next", "\\"}}));
}

TEST(JavaPropertiesTest, AContinuedLineIsNotAComment) {
  EXPECT_EQ(Parse("k=1\\\n#2\n"), (Properties{{"k", "1#2"}}));
}

TEST(JavaPropertiesTest, LineEndsMayBeLfCrLfOrCr) {
  EXPECT_EQ(Parse("a=1\r\nb=2\rc=3\n\n\r\nd=4"),
            (Properties{{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}}));
}

TEST(JavaPropertiesTest, EscapesAreDecodedInKeysAndValues) {
  EXPECT_EQ(Parse("a\\=b\\ c=x\\ty\\n\\u00e9\\q\n"),
            (Properties{{"a=b c", "x\ty\n\xc3\xa9q"}}));
}

TEST(JavaPropertiesTest, TheLastValueOfARepeatedKeyWins) {
  EXPECT_EQ(Parse("a=1\na=2\n"), (Properties{{"a", "2"}}));
}

TEST(JavaPropertiesTest, AMalformedUnicodeEscapeIsAnErrorNamingItsLine) {
  absl::StatusOr<Properties> p = ParseJavaProperties("a=1\n\nb=\\u00g1\n");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("line 3: malformed \\uxxxx"));
  EXPECT_FALSE(ParseJavaProperties("a=\\u12").ok()) << "cut short at the end of the text";
}

TEST(JavaPropertiesTest, TextOverTheLimitsIsRefused) {
  EXPECT_FALSE(ParseJavaProperties(std::string(kPropertiesBytesMax + 1, '#')).ok());
  std::string many;
  for (size_t i = 0; i <= kPropertiesKeysMax; ++i) many += "k" + std::to_string(i) + "=1\n";
  absl::StatusOr<Properties> p = ParseJavaProperties(many);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("more than 10000 keys"));
}

}  // namespace
}  // namespace restoresim
