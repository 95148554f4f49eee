#include "bench/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

namespace restoresim::bench {
namespace {

// Layout, top to bottom: each panel's title and subtitle above it, the panel, its x-axis
// ticks and label, its legend (outside the data, so it hides none), then the footer, wrapped.
constexpr double kWidth = 1120;
constexpr double kPanelWidth = 470, kPanelHeight = 320, kTop = 80;
constexpr double kLeftA = 80, kLeftB = 630;
constexpr double kTitleSize = 14, kSubtitleSize = 11, kLegendSize = 11, kFooterSize = 11;
constexpr double kLegendTop = kTop + kPanelHeight + 58;  // the first legend row's baseline
constexpr double kLegendRow = 16;
constexpr double kFooterLine = 14;
// An upper bound of a sans-serif glyph's advance, in font sizes (bold included): text laid out
// with it fits where it is put.
constexpr double kGlyphWidthEm = 0.62;

struct Series {
  std::string name;
  std::string color;
  const char* dash = "";
};
const Series kDefault{"ours, default path", "#1b7837"};
const Series kWriteBatch{"ours, WriteBatch path", "#2166ac", "6 3"};
const Series kPeer{"Kafka Streams", "#b2182b", "2 2"};

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

// A "nice" tick step for [0, max] with about `n` ticks.
double NiceStep(double max, int n) {
  const double raw = std::max(max, 1e-12) / n;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (raw <= m * mag) return m * mag;
  }
  return 10 * mag;
}

double TextWidth(std::string_view text, double font_size) {
  size_t glyphs = 0;
  for (const char c : text) glyphs += (static_cast<unsigned char>(c) & 0xc0) != 0x80;  // UTF-8
  return static_cast<double>(glyphs) * font_size * kGlyphWidthEm;
}

// The font size at most `size` at which `text` fits in `width`.
double FittingSize(std::string_view text, double size, double width) {
  const double needed = TextWidth(text, size);
  return needed <= width ? size : std::max(6.0, size * width / needed);
}

// `text` broken at spaces into lines of at most `width` at `font_size`.
std::vector<std::string> Wrapped(const std::string& text, double font_size, double width) {
  std::vector<std::string> lines;
  std::string line;
  size_t from = 0;
  while (from < text.size()) {
    size_t to = text.find(' ', from);
    if (to == std::string::npos) to = text.size();
    const std::string word = text.substr(from, to - from);
    from = to + 1;
    const std::string longer = line.empty() ? word : line + " " + word;
    if (!line.empty() && TextWidth(longer, font_size) > width) {
      lines.push_back(line);
      line = word;
    } else {
      line = longer;
    }
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string RateLabel(double r) {
  if (r >= 1e6) return fmt::format("{:g}M", r / 1e6);
  if (r >= 1e3) return fmt::format("{:g}k", r / 1e3);
  return fmt::format("{:g}", r);
}

class Panel {
 public:
  Panel(std::string& out, double left, double x_max, double y_max, bool log_x, double x_min)
      : out_(out), left_(left), x_min_(x_min), x_max_(x_max), y_max_(y_max), log_x_(log_x) {}

  double X(double x) const {
    if (log_x_) {
      return left_ + kPanelWidth * (std::log10(x) - std::log10(x_min_)) /
                         std::max(1e-9, std::log10(x_max_) - std::log10(x_min_));
    }
    return left_ + kPanelWidth * x / x_max_;
  }
  double Y(double y) const { return kTop + kPanelHeight * (1 - y / y_max_); }

  // The title and a subtitle, each within the panel's width (a smaller font where needed).
  void Titles(const std::string& title, const std::string& subtitle) {
    out_ += fmt::format("<text x='{}' y='{}' font-size='{:.1f}' font-weight='bold'>{}</text>\n",
                        left_, kTop - 30, FittingSize(title, kTitleSize, kPanelWidth),
                        Escape(title));
    out_ += fmt::format("<text x='{}' y='{}' font-size='{:.1f}' fill='#444'>{}</text>\n", left_,
                        kTop - 12, FittingSize(subtitle, kSubtitleSize, kPanelWidth),
                        Escape(subtitle));
  }

  void Axes(const std::string& x_label, const std::string& y_label) {
    out_ += fmt::format("<rect x='{}' y='{}' width='{}' height='{}' fill='none' stroke='#444'/>\n",
                        left_, kTop, kPanelWidth, kPanelHeight);
    const double step = NiceStep(y_max_, 5);
    for (double y = 0; y <= y_max_ + 1e-9; y += step) {
      out_ += fmt::format("<line x1='{0}' x2='{1}' y1='{2:.1f}' y2='{2:.1f}' stroke='#ddd'/>"
                          "<text x='{3}' y='{4:.1f}' font-size='11' text-anchor='end'>{5}</text>\n",
                          left_, left_ + kPanelWidth, Y(y), left_ - 6, Y(y) + 4, RateLabel(y));
    }
    if (log_x_) {
      for (double x = std::pow(10, std::floor(std::log10(x_min_))); x <= x_max_ * 1.0001; x *= 10) {
        for (double m : {1.0, 2.0, 5.0}) {
          const double v = x * m;
          if (v < x_min_ * 0.999 || v > x_max_ * 1.001) continue;
          out_ += fmt::format("<text x='{:.1f}' y='{}' font-size='11' text-anchor='middle'>{}"
                              "</text>\n",
                              X(v), kTop + kPanelHeight + 16, RateLabel(v));
        }
      }
    } else {
      const double xs = NiceStep(x_max_, 6);
      for (double x = 0; x <= x_max_ + 1e-9; x += xs) {
        out_ += fmt::format("<text x='{:.1f}' y='{}' font-size='11' text-anchor='middle'>{:g}"
                            "</text>\n",
                            X(x), kTop + kPanelHeight + 16, x);
      }
    }
    out_ += fmt::format("<text x='{}' y='{}' font-size='12' text-anchor='middle'>{}</text>\n",
                        left_ + kPanelWidth / 2, kTop + kPanelHeight + 36, Escape(x_label));
    out_ += fmt::format("<text x='{0}' y='{1}' font-size='12' text-anchor='middle' "
                        "transform='rotate(-90 {0} {1})'>{2}</text>\n",
                        left_ - 55, kTop + kPanelHeight / 2, Escape(y_label));
  }

  void Line(const Series& s, const std::vector<std::pair<double, double>>& points) {
    if (points.empty()) return;
    std::string path;
    for (const auto& [x, y] : points) path += fmt::format("{:.1f},{:.1f} ", X(x), Y(y));
    out_ += fmt::format("<polyline fill='none' stroke='{}' stroke-width='2' "
                        "stroke-dasharray='{}' points='{}'/>\n",
                        s.color, s.dash, path);
  }

  void Whisker(const Series& s, double x, double lo, double mid, double hi) {
    out_ += fmt::format("<line x1='{0:.1f}' x2='{0:.1f}' y1='{1:.1f}' y2='{2:.1f}' stroke='{3}'/>"
                        "<circle cx='{0:.1f}' cy='{4:.1f}' r='3.5' fill='{3}'/>\n",
                        X(x), Y(lo), Y(hi), s.color, Y(mid));
  }

  // Below the panel and its axis label, in rows as wide as the panel: never over the data.
  void Legend(const std::vector<Series>& series) {
    double x = left_, y = kLegendTop;
    for (const Series& s : series) {
      const double entry = 30 + TextWidth(s.name, kLegendSize);
      if (x > left_ && x + entry > left_ + kPanelWidth) {
        x = left_;
        y += kLegendRow;
      }
      out_ += fmt::format("<line x1='{0}' x2='{1}' y1='{2}' y2='{2}' stroke='{3}' "
                          "stroke-width='2' stroke-dasharray='{4}'/><text x='{5}' y='{6}' "
                          "font-size='{7}'>{8}</text>\n",
                          x, x + 24, y - 4, s.color, s.dash, x + 30, y, kLegendSize,
                          Escape(s.name));
      x += entry + 18;
    }
  }

 private:
  std::string& out_;
  double left_, x_min_, x_max_, y_max_;
  bool log_x_;
};

// The round whose duration is the median one.
const Measurement* MedianRound(const CaseSamples* c) {
  if (c == nullptr || c->rounds.empty()) return nullptr;
  std::vector<const Measurement*> by_time;
  for (const Measurement& m : c->rounds) by_time.push_back(&m);
  std::sort(by_time.begin(), by_time.end(),
            [](const Measurement* a, const Measurement* b) { return a->seconds < b->seconds; });
  return by_time[by_time.size() / 2];
}

// Records/s over consecutive windows of `bin_s`, as (window midpoint, rate) steps.
std::vector<std::pair<double, double>> Throughput(const Measurement& m, double bin_s) {
  std::vector<std::pair<double, double>> out;
  if (m.progress.size() < 2) return out;
  auto at = [&](double t) {  // records restored by time t, interpolated
    auto it = std::lower_bound(m.progress.begin(), m.progress.end(), t,
                               [](const auto& s, double v) { return s.first < v; });
    if (it == m.progress.begin()) return static_cast<double>(it->second);
    if (it == m.progress.end()) return static_cast<double>(m.progress.back().second);
    const auto& [t1, n1] = *it;
    const auto& [t0, n0] = *(it - 1);
    return n0 + (n1 - n0) * (t - t0) / std::max(t1 - t0, 1e-9);
  };
  const double end = m.progress.back().first;
  for (double t = 0; t < end; t += bin_s) {
    const double to = std::min(end, t + bin_s);
    const double rate = (at(to) - at(t)) / std::max(to - t, 1e-9);
    out.emplace_back(t, rate);
    out.emplace_back(to, rate);
  }
  return out;
}

void OverTime(std::string& out, const BenchResults& r) {
  const std::vector<std::pair<Series, const Measurement*>> runs = {
      {kDefault, MedianRound(r.Find("ours.scratch.default"))},
      {kWriteBatch, MedianRound(r.Find("ours.scratch.writebatch"))},
      {kPeer, MedianRound(r.Find("peer.scratch"))}};
  double t_max = 0, y_max = 0;
  for (const auto& [s, m] : runs) {
    if (m != nullptr) t_max = std::max(t_max, m->seconds);
  }
  const double bin = std::max(0.02, t_max / 50);
  std::vector<std::pair<Series, std::vector<std::pair<double, double>>>> lines;
  std::vector<Series> legend;
  for (const auto& [s, m] : runs) {
    if (m == nullptr) continue;
    lines.emplace_back(s, Throughput(*m, bin));
    for (const auto& [t, y] : lines.back().second) y_max = std::max(y_max, y);
    legend.push_back(s);
  }
  Panel panel(out, kLeftA, std::max(t_max, 1e-3), std::max(y_max * 1.1, 1.0), false, 0);
  panel.Titles("Restore throughput over time",
               fmt::format("{} records, the median round of each", r.records));
  panel.Axes(fmt::format("seconds since the first restore start ({:.2g} s bins)", bin),
             "records/s");
  for (const auto& [s, points] : lines) panel.Line(s, points);
  panel.Legend(legend);
}

void AgainstSize(std::string& out, const BenchResults& r) {
  std::map<std::string, std::vector<const CaseSamples*>> families;  // by series name
  for (const CaseSamples& c : r.cases) {
    // Other changelogs of the main size (from a checkpoint; transactional) are not the curve's.
    if (c.rounds.empty() || c.id.find("checkpoint") != std::string::npos ||
        c.id.find(".eos") != std::string::npos) {
      continue;
    }
    if (c.id.rfind("ours.", 0) == 0 && c.id.ends_with(".default")) families["d"].push_back(&c);
    if (c.id.rfind("ours.", 0) == 0 && c.id.ends_with(".writebatch")) families["w"].push_back(&c);
    if (c.id.rfind("peer.", 0) == 0) families["p"].push_back(&c);
  }
  double x_min = 1e300, x_max = 0, y_max = 0;
  for (const auto& [key, cases] : families) {
    for (const CaseSamples* c : cases) {
      x_min = std::min(x_min, static_cast<double>(c->size));
      x_max = std::max(x_max, static_cast<double>(c->size));
      for (const Measurement& m : c->rounds) y_max = std::max(y_max, m.RecordsPerSecond());
    }
  }
  if (x_max <= 0) return;
  x_min = std::min(x_min, x_max / 2);
  Panel panel(out, kLeftB, x_max * 1.3, std::max(y_max * 1.1, 1.0), true, x_min / 1.3);
  panel.Titles("Records/s against changelog size",
               "median of the rounds, whiskers from min to max; logarithmic size axis");
  panel.Axes("changelog records", "records/s");
  std::vector<Series> legend;
  for (const auto& [key, series] : {std::pair{"d", kDefault}, std::pair{"w", kWriteBatch},
                                    std::pair{"p", kPeer}}) {
    auto it = families.find(key);
    if (it == families.end()) continue;
    std::vector<const CaseSamples*> cases = it->second;
    std::sort(cases.begin(), cases.end(),
              [](const CaseSamples* a, const CaseSamples* b) { return a->size < b->size; });
    std::vector<std::pair<double, double>> medians;
    for (const CaseSamples* c : cases) {
      std::vector<double> rates;
      for (const Measurement& m : c->rounds) rates.push_back(m.RecordsPerSecond());
      const Spread s = Spread::Of(rates);
      panel.Whisker(series, static_cast<double>(c->size), s.min, s.median, s.max);
      medians.emplace_back(static_cast<double>(c->size), s.median);
    }
    panel.Line(series, medians);
    legend.push_back(series);
  }
  panel.Legend(legend);
}

}  // namespace

std::string RestorePlotSvg(const BenchResults& results) {
  const std::vector<std::string> footer =
      Wrapped(fmt::format("restoresim bench restore, backend {}; {}; {}", results.backend,
                          results.spec, results.machine),
              kFooterSize, kWidth - 2 * kLeftA);
  // Room for three legend rows, then the footer's lines.
  const double footer_top = kLegendTop + 2 * kLegendRow + 24;
  const double height = footer_top + kFooterLine * static_cast<double>(footer.size()) + 8;
  std::string out = fmt::format(
      "<svg xmlns='http://www.w3.org/2000/svg' width='{0}' height='{1}' viewBox='0 0 {0} {1}' "
      "font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n",
      kWidth, height);
  OverTime(out, results);
  AgainstSize(out, results);
  for (size_t i = 0; i < footer.size(); ++i) {
    out += fmt::format("<text x='{}' y='{}' font-size='{}' fill='#555'>{}</text>\n", kLeftA,
                       footer_top + kFooterLine * static_cast<double>(i), kFooterSize,
                       Escape(footer[i]));
  }
  out += "</svg>\n";
  return out;
}

}  // namespace restoresim::bench
