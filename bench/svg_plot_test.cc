// The restore plot's layout, read back from the SVG (issue 24: panel titles overlapped, the
// footer was clipped, the legend hid data): every text inside the picture, no two texts on
// top of each other, none over a panel's data area. A text's box is estimated at 0.6 em a
// glyph (a sans-serif font's advance is about 0.5 em; the plot lays out with 0.62).
#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench/svg_plot.h"

namespace restoresim::bench {
namespace {

struct Box {
  double left = 0, top = 0, right = 0, bottom = 0;
  std::string text;
  bool Overlaps(const Box& o) const {
    return left < o.right && o.left < right && top < o.bottom && o.top < bottom;
  }
};

double Attribute(const std::string& tag, const std::string& name, double fallback) {
  const std::regex re(" " + name + "='([-0-9.e]+)'");
  std::smatch m;
  return std::regex_search(tag, m, re) ? std::stod(m[1]) : fallback;
}

// The boxes of the horizontal texts (the rotated y-axis labels are left out).
std::vector<Box> TextBoxes(const std::string& svg) {
  std::vector<Box> boxes;
  const std::regex re("<text([^>]*)>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator();
       ++it) {
    const std::string tag = (*it)[1];
    if (tag.find("transform=") != std::string::npos) continue;
    const std::string text = (*it)[2];
    const double size = Attribute(tag, "font-size", 16);
    const double width = 0.6 * size * static_cast<double>(text.size());
    double x = Attribute(tag, "x", 0);
    if (tag.find("text-anchor='end'") != std::string::npos) x -= width;
    if (tag.find("text-anchor='middle'") != std::string::npos) x -= width / 2;
    const double y = Attribute(tag, "y", 0);
    boxes.push_back(Box{x, y - 0.8 * size, x + width, y + 0.2 * size, text});
  }
  return boxes;
}

// The panels' data areas: the framed rectangles.
std::vector<Box> Panels(const std::string& svg) {
  std::vector<Box> panels;
  const std::regex re("<rect( x='[^>]*stroke='#444'[^>]*)/>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator();
       ++it) {
    const std::string tag = (*it)[1];
    const double x = Attribute(tag, "x", 0), y = Attribute(tag, "y", 0);
    panels.push_back(Box{x, y, x + Attribute(tag, "width", 0), y + Attribute(tag, "height", 0),
                         "panel"});
  }
  return panels;
}

Measurement Round(double seconds, int64_t records) {
  Measurement m;
  m.records = records;
  m.seconds = seconds;
  m.progress = {{0, 0}, {seconds / 3, records / 4}, {seconds, records}};
  return m;
}

// A run with every series and a long footer, as a 1,000,000-record Kafka run writes it.
BenchResults Results() {
  BenchResults r;
  r.backend = "kafka";
  r.records = 1'000'000;
  r.spec = "1000000 records of 16 B keys and 100 B values in 1 partition, seed 1, "
           "exactly_once_v2 with 1000-record transactions, 10% aborted";
  r.machine = "2 cores, at the start: load average 0.52 0.61 0.70; at the end: load average "
              "1.95 1.20 0.88; 5 rounds in 412 s";
  for (const auto& [id, size, seconds] :
       std::vector<std::tuple<std::string, int64_t, double>>{
           {"ours.scratch.default", 1'000'000, 0.7}, {"ours.scratch.writebatch", 1'000'000, 1.9},
           {"peer.scratch", 1'000'000, 2.4}, {"ours.size62500.default", 62'500, 0.1},
           {"ours.size62500.writebatch", 62'500, 0.12}, {"peer.size62500", 62'500, 0.3},
           {"ours.size250000.default", 250'000, 0.25}, {"peer.size250000", 250'000, 0.7}}) {
    r.cases.push_back(CaseSamples{id, id, size,
                                  {Round(seconds, size), Round(seconds * 1.1, size),
                                   Round(seconds * 0.9, size)}});
  }
  return r;
}

TEST(SvgPlotLayout, TextsStayInsideThePictureAndApart) {
  const std::string svg = RestorePlotSvg(Results());
  const double width = Attribute(svg.substr(0, svg.find('>')), "width", 0);
  const double height = Attribute(svg.substr(0, svg.find('>')), "height", 0);
  const std::vector<Box> boxes = TextBoxes(svg);
  ASSERT_GT(boxes.size(), 20u);
  for (const Box& b : boxes) {
    EXPECT_GE(b.left, 0) << b.text;
    EXPECT_LE(b.right, width) << b.text;
    EXPECT_GE(b.top, 0) << b.text;
    EXPECT_LE(b.bottom, height) << b.text;
  }
  for (size_t i = 0; i < boxes.size(); ++i) {
    for (size_t j = i + 1; j < boxes.size(); ++j) {
      EXPECT_FALSE(boxes[i].Overlaps(boxes[j])) << "'" << boxes[i].text << "' and '"
                                                << boxes[j].text << "'";
    }
  }
  EXPECT_NE(svg.find("10% aborted"), std::string::npos) << "the footer is all there";
}

TEST(SvgPlotLayout, NoTextLiesOverAPanelsData) {
  const std::string svg = RestorePlotSvg(Results());
  const std::vector<Box> panels = Panels(svg);
  ASSERT_EQ(panels.size(), 2u);
  EXPECT_FALSE(panels[0].Overlaps(panels[1]));
  int legend_entries = 0;
  for (const Box& b : TextBoxes(svg)) {
    for (const Box& p : panels) EXPECT_FALSE(b.Overlaps(p)) << "'" << b.text << "' over data";
    legend_entries += b.text == "Kafka Streams" || b.text.starts_with("ours, ");
  }
  EXPECT_EQ(legend_entries, 6) << "three series in each panel's legend";
}

}  // namespace
}  // namespace restoresim::bench
