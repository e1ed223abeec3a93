// The report page: inline CSS, tables and SVG charts built from ReportData.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "bindersim/common/error.hpp"
#include "bindersim/io/compare_report.hpp"
#include "bindersim/io/report.hpp"
#include "bindersim/io/report_svg.hpp"
#include "bindersim/io/result_json.hpp"

namespace bindersim::io {

namespace {

constexpr double kWidth = 960.0;     // chart width in SVG user units (pixels at 100%)
constexpr double kCharWidth = 7.0;   // average width of a 12px character, for layout only
constexpr std::size_t kPalette = 8;  // colours --c0..--c7 of the style sheet
constexpr std::size_t kDashes = 4;   // dash patterns dash-0..dash-3, for more than 8 policies
constexpr double kNsPerUs = 1000.0;
constexpr double kLargestFixed = 1e15;  // larger numbers are printed in scientific notation

// Colours (palette indices) of the tiers, the breakdown parts and the selection decisions.
constexpr std::array<std::size_t, stats::kNumTiers> kTierColours = {2, 0, 1};
constexpr std::array<std::size_t, kBreakdownParts.size()> kPartColours = {0, 1, 2, 3, 6, 4, 5, 7};
constexpr std::array<std::size_t, 4> kSelectionColours = {2, 0, 1, 7};
constexpr std::array<std::string_view, 4> kSelectionLabels = {
    "same CPU", "same cluster", "other cluster or never ran", "no idle thread (queued)"};

// The style sheet. Colours are custom properties with a light and a dark set; the categorical
// palette is Okabe and Ito's (distinguishable with the common colour-vision deficiencies),
// lightened for dark backgrounds.
constexpr std::string_view kStyle = R"css(
:root{color-scheme:light dark;--bg:#ffffff;--fg:#1b1f24;--muted:#57606a;--grid:#d8dee4;
--axis:#6e7781;--panel:#f6f8fa;--border:#d0d7de;--good:#1a7f37;--bad:#cf222e;
--c0:#0072b2;--c1:#e69f00;--c2:#009e73;--c3:#cc79a7;--c4:#d55e00;--c5:#56b4e9;--c6:#8e6bbf;
--c7:#8c8c8c}
@media (prefers-color-scheme:dark){:root{--bg:#0f1419;--fg:#e6edf3;--muted:#9da7b3;
--grid:#30363d;--axis:#8b949e;--panel:#161b22;--border:#30363d;--good:#3fb950;--bad:#f85149;
--c0:#4ea8de;--c1:#f2b134;--c2:#2ec4a0;--c3:#e39ccb;--c4:#ff8a4c;--c5:#93d3f7;--c6:#b7a0e6;
--c7:#a8a8a8}}
html{background:var(--bg);color:var(--fg)}
body{margin:0 auto;max-width:1000px;padding:16px 20px 40px;
font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;margin:28px 0 6px}
h3{font-size:15px;margin:18px 0 6px}h4{font-size:14px;margin:14px 0 4px}
details{margin:8px 0}summary{cursor:pointer;font-weight:600}
th.group{text-align:center}
p{margin:6px 0}.meta,.note,footer{color:var(--muted)}
.missing{border-left:4px solid var(--c1);background:var(--panel);padding:6px 10px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border-bottom:1px solid var(--border);padding:3px 6px;text-align:left;vertical-align:top}
th{background:var(--panel)}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.num{white-space:nowrap}
td.better{color:var(--good);font-weight:600}td.worse{color:var(--bad);font-weight:600}
td.same{color:var(--muted)}
.table-wrap{overflow-x:auto}
.swatch{display:inline-block;width:10px;height:10px;margin-right:6px;border-radius:2px}
figure{margin:8px 0}
svg.chart{display:block;width:100%;height:auto;max-width:960px}
svg.chart text{fill:var(--fg);font-size:12px;font-family:inherit}
svg.chart .chart-title{font-size:15px;font-weight:600}
svg.chart .panel-title,svg.chart .group-heading{font-weight:600}
svg.chart .axis-label,svg.chart .note{fill:var(--muted)}
svg.chart .tick{fill:var(--muted);font-size:11px}
svg.chart .grid{stroke:var(--grid);stroke-width:1}
svg.chart .axis{stroke:var(--axis);stroke-width:1}
svg.chart .bar-label{paint-order:stroke;stroke:var(--bg);stroke-width:3px;stroke-linejoin:round;
font-size:11px}
svg.chart .cdf{fill:none;stroke-width:2}
svg.chart .legend-line{stroke-width:3}
svg.chart .marker{stroke:var(--bg);stroke-width:1}
svg.chart .whisker{stroke-width:2}svg.chart .marker.hollow{fill:var(--bg);stroke-width:2}
svg.chart .hollow.stroke-0{stroke:var(--c0)}svg.chart .hollow.stroke-1{stroke:var(--c1)}
svg.chart .hollow.stroke-2{stroke:var(--c2)}svg.chart .hollow.stroke-3{stroke:var(--c3)}
svg.chart .hollow.stroke-4{stroke:var(--c4)}svg.chart .hollow.stroke-5{stroke:var(--c5)}
svg.chart .hollow.stroke-6{stroke:var(--c6)}svg.chart .hollow.stroke-7{stroke:var(--c7)}
.fill-0{fill:var(--c0);background:var(--c0)}.fill-1{fill:var(--c1);background:var(--c1)}
.fill-2{fill:var(--c2);background:var(--c2)}.fill-3{fill:var(--c3);background:var(--c3)}
.fill-4{fill:var(--c4);background:var(--c4)}.fill-5{fill:var(--c5);background:var(--c5)}
.fill-6{fill:var(--c6);background:var(--c6)}.fill-7{fill:var(--c7);background:var(--c7)}
.stroke-0{stroke:var(--c0)}.stroke-1{stroke:var(--c1)}.stroke-2{stroke:var(--c2)}
.stroke-3{stroke:var(--c3)}.stroke-4{stroke:var(--c4)}.stroke-5{stroke:var(--c5)}
.stroke-6{stroke:var(--c6)}.stroke-7{stroke:var(--c7)}
.dash-1{stroke-dasharray:7 3}.dash-2{stroke-dasharray:2 3}.dash-3{stroke-dasharray:9 3 2 3}
)css";

std::string_view class_title(stats::SchedClass c) { return stats::sched_class_label(c); }

std::string_view tier_title(stats::Tier t) { return stats::tier_label(t); }

std::string fill_class(std::size_t colour) { return "fill-" + std::to_string(colour % kPalette); }

// Colour and dash of policy i's curve.
std::string series_stroke(std::size_t i) {
  return "stroke-" + std::to_string(i % kPalette) + " dash-" +
         std::to_string((i / kPalette) % kDashes);
}

// Layout width of text: UTF-8 code points times the average character width.
double text_width(std::string_view text) {
  const auto points = std::count_if(text.begin(), text.end(), [](char ch) {
    return (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  });
  return static_cast<double>(points) * kCharWidth;
}

// Splits text at spaces into lines of at most `max_chars` bytes (longer words stay whole).
std::vector<std::string> wrap(std::string_view text, std::size_t max_chars) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t space = std::min(text.find(' ', start), text.size());
    const std::string_view word = text.substr(start, space - start);
    if (!line.empty() && line.size() + 1 + word.size() > max_chars) {
      lines.push_back(std::move(line));
      line.clear();
    }
    if (!line.empty()) line.push_back(' ');
    line.append(word);
    start = space + 1;
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

// Microseconds with four significant digits at most (one decimal at least): "112.2", "9.718".
std::string us_text(double us) {
  const double a = std::fabs(us);
  return format_fixed(us, a >= 100.0 ? 1 : a >= 10.0 ? 2 : 3);
}

std::string percent_text(double fraction) { return format_fixed(fraction * 100.0, 1) + "%"; }

// x with `decimals` decimals and thousands grouped: "6,523.3"; beyond kLargestFixed, four
// significant digits in scientific notation: "1.797e+308".
std::string grouped(double x, int decimals) {
  // Beyond a thousand million million, fixed notation runs to hundreds of digits: no figure of
  // a real run gets there, a malformed document can.
  if (std::fabs(x) >= kLargestFixed) return fmt::format("{:.4g}", x);
  return group_thousands(format_fixed(x, decimals));
}

// Four significant digits, as the console's compare table prints them.
std::string significant_text(double x) { return grouped(x, four_significant_decimals(x)); }

std::string seeds_text(const std::vector<std::uint64_t>& seeds) {
  if (seeds.empty()) return "none";
  bool consecutive = true;
  for (std::size_t i = 1; i < seeds.size(); ++i) consecutive &= seeds[i] == seeds[i - 1] + 1;
  if (seeds.size() > 2 && consecutive) return fmt::format("{}..{}", seeds.front(), seeds.back());
  std::string out;
  for (std::uint64_t seed : seeds) out += (out.empty() ? "" : ", ") + std::to_string(seed);
  return out;
}

std::vector<std::uint64_t> seeds_of(const ReportPolicy& policy) {
  std::vector<std::uint64_t> seeds;
  for (const ResultDocument& run : policy.runs) seeds.push_back(run.seed);
  return seeds;
}

// ---- chart pieces ----

struct LegendItem {
  std::string label;
  std::string swatch_class;
  bool line = false;  // a line sample (curves) instead of a filled square (bars)
};

// Draws the items left to right from baseline y, wrapping before x_max; returns the baseline
// below the last row.
double draw_legend(SvgWriter& svg, double x, double y, double x_max,
                   const std::vector<LegendItem>& items) {
  svg.open_group("legend");
  double cx = x;
  for (const LegendItem& item : items) {
    const double w = 18.0 + text_width(item.label) + 16.0;
    if (cx > x && cx + w > x_max) {
      cx = x;
      y += 18.0;
    }
    if (item.line) {
      svg.line(cx, y - 4.0, cx + 14.0, y - 4.0, "legend-line " + item.swatch_class);
    } else {
      svg.rect(cx, y - 10.0, 12.0, 12.0, item.swatch_class);
    }
    svg.text(cx + 18.0, y, item.label, "legend-text");
    cx += w;
  }
  svg.close_group();
  return y + 18.0;
}

// A tick's label: `decimals` decimals, or scientific notation beyond kLargestFixed.
std::string tick_text(double tick, int decimals) {
  return std::fabs(tick) >= kLargestFixed ? fmt::format("{:.3g}", tick)
                                          : format_fixed(tick, decimals);
}

// Vertical grid lines and labels of a horizontal value axis, its base line, and its title.
void draw_x_axis(SvgWriter& svg, const LinearScale& x, const NiceAxis& axis, double top,
                 double bottom, std::string_view label) {
  svg.open_group("x-axis");
  for (double tick : axis.ticks) {
    svg.line(x(tick), top, x(tick), bottom, "grid");
    svg.text(x(tick), bottom + 14.0, tick_text(tick, axis.decimals), "tick", Anchor::kMiddle);
  }
  svg.line(x.range_min(), bottom, x.range_max(), bottom, "axis");
  svg.text((x.range_min() + x.range_max()) / 2.0, bottom + 32.0, label, "axis-label",
           Anchor::kMiddle);
  svg.close_group();
}

// Horizontal grid lines and labels of a vertical value axis, its base line, and its title
// rotated along it at x = label_x.
void draw_y_axis(SvgWriter& svg, const LinearScale& y, const NiceAxis& axis, double left,
                 double right, double label_x, std::string_view label) {
  svg.open_group("y-axis");
  for (double tick : axis.ticks) {
    svg.line(left, y(tick), right, y(tick), "grid");
    svg.text(left - 6.0, y(tick) + 4.0, tick_text(tick, axis.decimals), "tick", Anchor::kEnd);
  }
  svg.line(left, y.range_min(), left, y.range_max(), "axis");
  svg.text(label_x, (y.range_min() + y.range_max()) / 2.0, label, "axis-label", Anchor::kMiddle,
           -90.0);
  svg.close_group();
}

// ---- stacked horizontal bars ----

struct Segment {
  double value = 0.0;  // in the axis unit; negative values stack left of zero
  std::size_t colour = 0;
  std::string tooltip;
  std::string text;  // drawn inside the segment when it fits
};

struct BarRow {
  std::string label;
  std::vector<Segment> segments;  // empty: the row shows `empty_text`
  std::string empty_text;
};

struct BarGroup {
  std::string heading;
  std::vector<BarRow> rows;
};

struct BarChart {
  std::string id;
  std::string title;
  std::string description;
  std::string x_label;
  std::string y_label;
  std::vector<LegendItem> legend;
  std::vector<BarGroup> groups;
  bool percent = false;  // a fixed 0..100 axis
};

std::string render_bar_chart(const BarChart& chart) {
  constexpr double kBar = 18.0;
  constexpr double kRowStep = 24.0;
  constexpr double kHeading = 22.0;
  double label_width = 0.0;
  double low = 0.0;
  double high = 0.0;
  for (const BarGroup& group : chart.groups) {
    for (const BarRow& row : group.rows) {
      label_width = std::max(label_width, text_width(row.label));
      double positive = 0.0;
      double negative = 0.0;
      for (const Segment& s : row.segments) (s.value >= 0 ? positive : negative) += s.value;
      high = std::max(high, positive);
      low = std::min(low, negative);
    }
  }
  const NiceAxis axis = chart.percent ? nice_axis(0.0, 100.0, 5) : nice_axis(low, high, 6);
  const double left = std::clamp(label_width + 40.0, 130.0, 360.0);
  const double right = kWidth - 24.0;

  // Rows are laid out first: the height of the image depends on them.
  SvgWriter probe("", kWidth, 0, "", "");
  const double legend_bottom = draw_legend(probe, 10.0, 48.0, right, chart.legend);
  const double top = legend_bottom + 2.0;
  double bottom = top;
  for (const BarGroup& group : chart.groups)
    bottom += kHeading + kRowStep * static_cast<double>(group.rows.size()) + 6.0;

  SvgWriter svg(chart.id, kWidth, bottom + 48.0, chart.title, chart.description);
  svg.text(10.0, 22.0, chart.title, "chart-title");
  draw_legend(svg, 10.0, 48.0, right, chart.legend);
  const LinearScale x(axis.min, axis.max, left, right);
  draw_x_axis(svg, x, axis, top, bottom, chart.x_label);
  svg.text(14.0, (top + bottom) / 2.0, chart.y_label, "axis-label", Anchor::kMiddle, -90.0);

  double y = top;
  for (const BarGroup& group : chart.groups) {
    svg.open_group("bar-group");
    svg.text(28.0, y + 15.0, group.heading, "group-heading");
    y += kHeading;
    for (const BarRow& row : group.rows) {
      svg.text(left - 8.0, y + 13.0, row.label, "bar-name", Anchor::kEnd);
      if (row.segments.empty()) {
        svg.text(x(0.0) + 6.0, y + 13.0, row.empty_text, "note");
      }
      double positive = 0.0;
      double negative = 0.0;
      for (const Segment& s : row.segments) {
        if (s.value == 0.0) continue;
        double& end = s.value > 0 ? positive : negative;
        const double x0 = std::min(x(end), x(end + s.value));
        const double x1 = std::max(x(end), x(end + s.value));
        end += s.value;
        svg.rect(x0, y, x1 - x0, kBar, "bar " + fill_class(s.colour), s.tooltip);
        if (!s.text.empty() && x1 - x0 >= text_width(s.text) + 6.0) {
          svg.text((x0 + x1) / 2.0, y + 13.0, s.text, "bar-label", Anchor::kMiddle);
        }
      }
      y += kRowStep;
    }
    y += 6.0;
    svg.close_group();
  }
  svg.line(x(0.0), top, x(0.0), bottom, "axis");
  return svg.finish();
}

// ---- the charts ----

std::string tier_share_chart(const ReportData& data) {
  BarChart chart;
  chart.id = "chart-tier-shares";
  chart.title = "Tier shares by policy and scheduling class";
  chart.description =
      "For each scheduling class of the caller, one bar per policy split into the share of "
      "its calls handled on the caller's core, in its cluster, and in another cluster.";
  chart.x_label = "share of the class's two-way calls (%)";
  chart.y_label = "policy";
  chart.percent = true;
  for (std::size_t t = 0; t < stats::kAllTiers.size(); ++t) {
    chart.legend.push_back(
        {std::string(tier_title(stats::kAllTiers[t])), fill_class(kTierColours[t])});
  }
  for (stats::SchedClass c : stats::kAllSchedClasses) {
    BarGroup group;
    group.heading = std::string(class_title(c)) + " callers";
    for (const ReportPolicy& policy : data.policies) {
      BarRow row;
      row.label = policy.label;
      row.empty_text = "no calls of this class";
      for (std::size_t t = 0; t < stats::kAllTiers.size(); ++t) {
        const std::optional<double> share = pooled_share(policy, c, stats::kAllTiers[t]);
        if (!share) break;
        row.segments.push_back(
            {*share * 100.0, kTierColours[t],
             fmt::format("{}, {}, {}: {} ({} calls)", policy.label, class_title(c),
                         tier_title(stats::kAllTiers[t]), percent_text(*share),
                         tier_count(policy, c, stats::kAllTiers[t])),
             percent_text(*share)});
      }
      group.rows.push_back(std::move(row));
    }
    chart.groups.push_back(std::move(group));
  }
  return render_bar_chart(chart);
}

std::string breakdown_chart(const ReportData& data) {
  BarChart chart;
  chart.id = "chart-breakdown";
  chart.title = "Latency breakdown: mean per call";
  chart.description =
      "For each class and tier with calls, one bar per policy: the mean time per call spent in "
      "each part of the round trip. The parts add up to the tier's mean latency; 'other' is "
      "the remainder and may be negative (drawn left of zero).";
  chart.x_label = "mean time per call (µs)";
  chart.y_label = "policy";
  for (std::size_t p = 0; p < kBreakdownParts.size(); ++p) {
    chart.legend.push_back({std::string(kBreakdownParts[p].label), fill_class(kPartColours[p])});
  }
  for (stats::SchedClass c : stats::kAllSchedClasses) {
    for (stats::Tier t : stats::kAllTiers) {
      BarGroup group;
      group.heading = fmt::format("{} {}", class_title(c), tier_title(t));
      bool any = false;
      for (const ReportPolicy& policy : data.policies) {
        BarRow row;
        row.label = policy.label;
        row.empty_text = "no calls in this tier";
        if (const auto parts = tier_breakdown(policy, c, t)) {
          any = true;
          for (std::size_t p = 0; p < kBreakdownParts.size(); ++p) {
            const double us = (*parts)[p] / kNsPerUs;
            row.segments.push_back(
                {us, kPartColours[p],
                 fmt::format("{}, {} {}, {}: {} µs", policy.label, class_title(c), tier_title(t),
                             kBreakdownParts[p].label, us_text(us)),
                 ""});
          }
        }
        group.rows.push_back(std::move(row));
      }
      if (any) chart.groups.push_back(std::move(group));
    }
  }
  if (chart.groups.empty()) {
    BarGroup group;
    group.heading = "no two-way calls in any input";
    chart.groups.push_back(std::move(group));
  }
  return render_bar_chart(chart);
}

std::string selection_chart(const ReportData& data) {
  BarChart chart;
  chart.id = "chart-selection";
  chart.title = "Thread selection: where the chosen thread last ran";
  chart.description =
      "One bar per policy: the share of the selector's choices whose thread last ran on the "
      "caller's CPU, elsewhere in its cluster, in another cluster (or never), and the "
      "selections that found no idle thread.";
  chart.x_label = "share of selections (%)";
  chart.y_label = "policy";
  chart.percent = true;
  for (std::size_t k = 0; k < kSelectionLabels.size(); ++k) {
    chart.legend.push_back({std::string(kSelectionLabels[k]), fill_class(kSelectionColours[k])});
  }
  BarGroup group;
  group.heading = "all selections (two-way, oneway and process wakeups)";
  for (const ReportPolicy& policy : data.policies) {
    BarRow row;
    row.label = policy.label;
    row.empty_text = "no selections";
    if (const auto shares = selection_shares(policy)) {
      for (std::size_t k = 0; k < kSelectionLabels.size(); ++k) {
        row.segments.push_back({(*shares)[k] * 100.0, kSelectionColours[k],
                                fmt::format("{}: {} {}", policy.label, kSelectionLabels[k],
                                            percent_text((*shares)[k])),
                                percent_text((*shares)[k])});
      }
    }
    group.rows.push_back(std::move(row));
  }
  chart.groups.push_back(std::move(group));
  return render_bar_chart(chart);
}

// Grouped vertical bars: for each CPU, one bar per policy of its busy share.
std::string cpu_chart(const ReportData& data) {
  constexpr double kLeft = 70.0;
  constexpr double kRight = kWidth - 20.0;
  constexpr double kPlotHeight = 220.0;
  std::vector<std::optional<std::vector<double>>> shares;
  std::size_t cpus = 0;
  std::vector<LegendItem> legend;
  for (std::size_t i = 0; i < data.policies.size(); ++i) {
    shares.push_back(cpu_busy_shares(data.policies[i]));
    cpus = std::max(cpus, shares.back() ? shares.back()->size() : 0);
    legend.push_back(
        {data.policies[i].label + (shares.back() ? "" : " (no per-CPU data)"), fill_class(i)});
  }
  SvgWriter probe("", kWidth, 0, "", "");
  const double top = draw_legend(probe, 10.0, 48.0, kRight, legend) + 8.0;
  const double bottom = top + kPlotHeight;

  const std::string title = "CPU utilization by policy";
  SvgWriter svg("chart-cpu-utilization", kWidth, bottom + 46.0, title,
                "For each CPU, one bar per policy: the share of simulated time the CPU was busy "
                "running tasks, context switches and cache stalls included.");
  svg.text(10.0, 22.0, title, "chart-title");
  draw_legend(svg, 10.0, 48.0, kRight, legend);
  const NiceAxis y_axis = nice_axis(0.0, 100.0, 5);
  const LinearScale y(y_axis.min, y_axis.max, bottom, top);
  draw_y_axis(svg, y, y_axis, kLeft, kRight, 18.0, "busy share of simulated time (%)");
  const double group_width = (kRight - kLeft) / static_cast<double>(std::max<std::size_t>(cpus, 1));
  const double bar_width =
      group_width * 0.8 / static_cast<double>(std::max<std::size_t>(data.policies.size(), 1));
  svg.open_group("x-axis");
  for (std::size_t cpu = 0; cpu < cpus; ++cpu) {
    const double group_x = kLeft + static_cast<double>(cpu) * group_width;
    svg.text(group_x + group_width / 2.0, bottom + 14.0, "cpu" + std::to_string(cpu), "tick",
             Anchor::kMiddle);
  }
  svg.line(kLeft, bottom, kRight, bottom, "axis");
  svg.text((kLeft + kRight) / 2.0, bottom + 32.0, "CPU (id order)", "axis-label", Anchor::kMiddle);
  svg.close_group();
  for (std::size_t i = 0; i < data.policies.size(); ++i) {
    if (!shares[i]) continue;
    svg.open_group("cpu-bars");
    for (std::size_t cpu = 0; cpu < shares[i]->size(); ++cpu) {
      const double percent = (*shares[i])[cpu] * 100.0;
      const double x = kLeft + static_cast<double>(cpu) * group_width + group_width * 0.1 +
                       static_cast<double>(i) * bar_width;
      svg.rect(x, y(percent), std::max(bar_width - 1.0, 1.0), y(0.0) - y(percent),
               "bar " + fill_class(i),
               fmt::format("{}: cpu{} busy {}", data.policies[i].label, cpu,
                           format_fixed(percent, 2) + "%"));
    }
    svg.close_group();
  }
  if (cpus == 0) {
    svg.text((kLeft + kRight) / 2.0, (top + bottom) / 2.0, "no per-CPU data", "note",
             Anchor::kMiddle);
  }
  return svg.finish();
}

std::string quantile_name(double fraction) {
  if (fraction == 0.0) return "min";
  if (fraction == 1.0) return "max";
  return "p" + format_coord(fraction * 100.0);
}

struct CdfPanel {
  std::string title;
  std::vector<std::vector<CdfPoint>> curves;  // per policy; empty without calls
};

void draw_cdf_panel(SvgWriter& svg, double cx, double cy, double cell_width, double cell_height,
                    const CdfPanel& panel, const ReportData& data) {
  const double left = cx + 58.0;
  const double right = cx + cell_width - 16.0;
  const double top = cy + 30.0;
  const double bottom = cy + cell_height - 54.0;
  double low = 0.0;
  double high = 0.0;
  bool any = false;
  for (const auto& curve : panel.curves) {
    for (const CdfPoint& p : curve) {
      const double us = p.latency_ns / kNsPerUs;
      low = any ? std::min(low, us) : us;
      high = any ? std::max(high, us) : us;
      any = true;
    }
  }
  svg.open_group("cdf-panel");
  svg.text(left, cy + 18.0, panel.title, "panel-title");
  const NiceAxis x_axis = any ? nice_axis(low, high, 4) : nice_axis(0.0, 1.0, 4);
  const NiceAxis y_axis = nice_axis(0.0, 100.0, 4);
  const LinearScale x(x_axis.min, x_axis.max, left, right);
  const LinearScale y(y_axis.min, y_axis.max, bottom, top);
  draw_y_axis(svg, y, y_axis, left, right, cx + 16.0, "calls at or below (%)");
  draw_x_axis(svg, x, x_axis, top, bottom, "round-trip latency (µs)");
  if (!any) {
    svg.text((left + right) / 2.0, (top + bottom) / 2.0, "no calls", "note", Anchor::kMiddle);
  }
  for (std::size_t i = 0; i < panel.curves.size(); ++i) {
    const auto& curve = panel.curves[i];
    std::vector<std::pair<double, double>> points;
    for (const CdfPoint& p : curve) {
      points.emplace_back(x(p.latency_ns / kNsPerUs), y(p.fraction * 100.0));
    }
    svg.polyline(points, "cdf " + series_stroke(i));
    for (std::size_t k = 0; k < curve.size(); ++k) {
      svg.circle(
          points[k].first, points[k].second, 3.0, "marker " + fill_class(i),
          fmt::format("{}: {} = {} µs", data.policies[i].label, quantile_name(curve[k].fraction),
                      us_text(curve[k].latency_ns / kNsPerUs)));
    }
  }
  svg.close_group();
}

std::string cdf_chart(const ReportData& data) {
  constexpr double kCellWidth = 313.0;
  constexpr double kCellHeight = 226.0;
  constexpr double kTop = 36.0;
  constexpr double kLeft = 10.0;
  std::vector<CdfPanel> panels;
  CdfPanel all;
  all.title = "all two-way calls";
  for (const ReportPolicy& policy : data.policies) all.curves.push_back(latency_cdf(policy));
  panels.push_back(std::move(all));
  for (stats::SchedClass c : stats::kAllSchedClasses) {
    for (stats::Tier t : stats::kAllTiers) {
      CdfPanel panel;
      panel.title = fmt::format("{} {}", class_title(c), tier_title(t));
      for (const ReportPolicy& policy : data.policies) {
        panel.curves.push_back(tier_cdf(policy, c, t));
      }
      panels.push_back(std::move(panel));
    }
  }

  const std::string title = "Latency CDF by policy, scheduling class and tier";
  SvgWriter svg("chart-latency-cdf", kWidth, kTop + 3 * kCellHeight, title,
                "Cumulative distribution of the round-trip latency, drawn through the quantiles "
                "the result JSON carries (min for all calls, p50, p90, p99, max) and joined by "
                "straight lines; one line per policy.");
  svg.text(kLeft, 22.0, title, "chart-title");
  draw_cdf_panel(svg, kLeft, kTop, kCellWidth, kCellHeight, panels[0], data);
  for (std::size_t k = 1; k < panels.size(); ++k) {
    const double cx = kLeft + static_cast<double>((k - 1) % 3) * kCellWidth;
    const double cy = kTop + static_cast<double>(1 + (k - 1) / 3) * kCellHeight;
    draw_cdf_panel(svg, cx, cy, kCellWidth, kCellHeight, panels[k], data);
  }

  // The legend and how to read the curves, beside the first panel.
  std::vector<LegendItem> legend;
  for (std::size_t i = 0; i < data.policies.size(); ++i) {
    legend.push_back({data.policies[i].label, series_stroke(i), true});
  }
  const double note_x = kLeft + kCellWidth + 20.0;
  double y = draw_legend(svg, note_x, kTop + 24.0, kWidth - 10.0, legend) + 8.0;
  const std::string note =
      "Each curve is drawn through the quantiles the result JSON carries: p50, p90, p99 and "
      "max for a tier, plus the minimum for all calls. Points are joined by straight lines; "
      "the shape between them, and below p50 for a tier, is not measured. With several seeds "
      "each quantile is the mean over the seeds.";
  for (const std::string& line : wrap(note, 80)) {
    svg.text(note_x, y, line, "note");
    y += 16.0;
  }
  return svg.finish();
}

// ---- tables ----

std::string swatch(std::size_t i) { return "<span class=\"swatch " + fill_class(i) + "\"></span>"; }

std::string policy_table(const ReportData& data) {
  // Scenario and topology get a column only when the policies differ in them (the page's
  // header names them otherwise).
  std::vector<std::string> scenarios;
  std::vector<std::string> topologies;
  for (const ReportPolicy& p : data.policies) {
    scenarios.push_back(p.scenario);
    topologies.push_back(p.topology);
  }
  const bool scenario_column = distinct_joined(scenarios) != scenarios.front();
  const bool topology_column = distinct_joined(topologies) != topologies.front();
  std::string html =
      "<div class=\"table-wrap\"><table id=\"table-policies\" class=\"policies\">\n<thead><tr>"
      "<th>policy</th><th>input</th>";
  if (scenario_column) html += "<th>scenario</th>";
  if (topology_column) html += "<th>topology</th>";
  html +=
      "<th>placement</th><th>seeds</th><th class=\"num\">calls</th>"
      "<th class=\"num\">calls/s</th><th class=\"num\">mean (µs)</th>"
      "<th class=\"num\">p50 (µs)</th><th class=\"num\">p99 (µs)</th>"
      "<th class=\"num\">migrations per call</th><th class=\"num\">context switches per "
      "call</th></tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < data.policies.size(); ++i) {
    const ReportPolicy& p = data.policies[i];
    std::uint64_t completed = 0;
    std::uint64_t calls = 0;
    std::uint64_t migrations = 0;
    std::uint64_t switches = 0;
    double per_second = 0.0;
    double latency_sum = 0.0;
    double p50_sum = 0.0;
    double p99_sum = 0.0;
    std::size_t with_calls = 0;
    for (const ResultDocument& run : p.runs) {
      completed = saturating_add(completed, run.completed);
      migrations = saturating_add(migrations, run.counters.migrations);
      switches = saturating_add(switches, run.counters.context_switches);
      // Each run's share of the mean, so that rates near the largest double do not overflow.
      per_second += run.per_second / static_cast<double>(p.runs.size());
      if (run.latency.count == 0) continue;
      calls = saturating_add(calls, run.latency.count);
      latency_sum +=
          static_cast<double>(run.latency.mean_ns) * static_cast<double>(run.latency.count);
      p50_sum += static_cast<double>(run.latency.p50_ns);
      p99_sum += static_cast<double>(run.latency.p99_ns);
      ++with_calls;
    }
    const auto per_call = [&](std::uint64_t n) {
      return completed == 0
                 ? std::string("-")
                 : format_fixed(static_cast<double>(n) / static_cast<double>(completed), 3);
    };
    const auto latency_cell = [&](double sum, double n) {
      return with_calls == 0 ? std::string("-") : us_text(sum / n / kNsPerUs);
    };
    const auto text_cell = [](std::string_view text) {
      return "<td>" + html_escape(text) + "</td>";
    };
    const auto number_cell = [](std::string_view text) {
      return "<td class=\"num\">" + html_escape(text) + "</td>";
    };
    html += "<tr><td>" + swatch(i) + html_escape(p.label) + "</td><td>" + html_escape(p.source);
    if (!p.overrides.empty()) {
      html += "<br><span class=\"note\">" + html_escape(p.overrides) + "</span>";
    }
    html += "</td>";
    if (scenario_column) html += text_cell(p.scenario);
    if (topology_column) html += text_cell(p.topology);
    html += text_cell(p.placement) + text_cell(seeds_text(seeds_of(p))) +
            number_cell(grouped(static_cast<double>(completed), 0)) +
            number_cell(grouped(per_second, 1)) +
            number_cell(latency_cell(latency_sum, static_cast<double>(calls))) +
            number_cell(latency_cell(p50_sum, static_cast<double>(with_calls))) +
            number_cell(latency_cell(p99_sum, static_cast<double>(with_calls))) +
            number_cell(per_call(migrations)) + number_cell(per_call(switches)) + "</tr>\n";
  }
  html += "</tbody></table></div>\n";
  return html;
}

// Each policy's governor and mean frequency per cluster (MHz); "" when no policy has them.
std::string cluster_table(const ReportData& data) {
  std::vector<std::string> clusters;
  for (const ReportPolicy& p : data.policies) {
    for (const auto& [name, khz] : cluster_frequencies(p)) {
      if (std::find(clusters.begin(), clusters.end(), name) == clusters.end()) {
        clusters.push_back(name);
      }
    }
  }
  if (clusters.empty()) return "";
  std::string html =
      "<div class=\"table-wrap\"><table id=\"table-clusters\" class=\"clusters\">\n"
      "<thead><tr><th>policy</th><th>governor</th>";
  for (const std::string& name : clusters) {
    html += "<th class=\"num\">" + html_escape(name) + " (MHz)</th>";
  }
  html += "</tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < data.policies.size(); ++i) {
    const ReportPolicy& p = data.policies[i];
    std::vector<std::string> governors;
    for (const auto& scheduler : p.schedulers) {
      if (scheduler) governors.push_back(scheduler->governor);
    }
    html += "<tr><td>" + swatch(i) + html_escape(p.label) + "</td><td>" +
            html_escape(governors.empty() ? "-" : distinct_joined(governors)) + "</td>";
    const auto frequencies = cluster_frequencies(p);
    for (const std::string& name : clusters) {
      const auto it = std::find_if(frequencies.begin(), frequencies.end(),
                                   [&](const auto& f) { return f.first == name; });
      html += "<td class=\"num\">" +
              (it == frequencies.end() ? std::string("-") : grouped(it->second / 1000.0, 0)) +
              "</td>";
    }
    html += "</tr>\n";
  }
  html += "</tbody></table></div>\n";
  return html;
}

// The CPUs section: per-CPU utilization when the inputs carry it (else a note saying what is
// missing), the clusters' frequencies, and the selector's decisions.
std::string cpu_section(const ReportData& data) {
  std::vector<std::string> without;
  for (const ReportPolicy& p : data.policies) {
    if (!cpu_busy_shares(p)) without.push_back(p.label);
  }
  std::string html = "<section id=\"cpus\">\n<h2>CPUs</h2>\n";
  if (without.size() == data.policies.size()) {
    html +=
        "<p class=\"missing\">Per-CPU utilization is not shown: no input carries per-CPU data "
        "(the result's <code>scheduler.cpu_busy_share</code>; results written before it "
        "existed have none). The closest figures are the selector's decisions by the CPU "
        "relation of the chosen thread, below, and the migrations and context switches per "
        "call in the policy table.</p>\n";
  } else {
    html +=
        "<p>Each CPU's busy share of simulated time (the result's "
        "<code>scheduler.cpu_busy_share</code>), averaged over the seeds.</p>\n";
    if (!without.empty()) {
      std::string names;
      for (const std::string& label : without) names += (names.empty() ? "" : ", ") + label;
      html += "<p class=\"missing\">No per-CPU data in: " + html_escape(names) +
              " (results written before <code>scheduler</code> existed).</p>\n";
    }
    html += "<figure>\n" + cpu_chart(data) + "</figure>\n";
    const std::string clusters = cluster_table(data);
    if (!clusters.empty()) {
      html += "<p>Time-weighted mean frequency of each cluster, averaged over the seeds.</p>\n" +
              clusters;
    }
  }
  html +=
      "<h3>Thread selection</h3>\n<figure>\n" + selection_chart(data) + "</figure>\n</section>\n";
  return html;
}

// A value cell's text: four significant digits, then "± ci95" when the cell has one.
std::string cell_value_text(const ReportCompareCell& cell) {
  if (!cell.mean) return "-";
  std::string value = significant_text(*cell.mean);
  if (cell.ci95) value += " ± " + significant_text(*cell.ci95);
  return value;
}

// A Δ% rounded to 0.1%: "+2.0%", "-0.4%".
std::string delta_text(double delta_pct) {
  double rounded = std::round(delta_pct * 10.0) / 10.0;
  if (rounded == 0.0) rounded = 0.0;
  // Beyond a million percent, fixed notation would print hundreds of digits (or, scaled by 10
  // near the largest double, "inf").
  return std::fabs(delta_pct) < 1e6 ? fmt::format("{:+.1f}%", rounded)
                                    : fmt::format("{:+.2g}%", delta_pct);
}

// The <td> of a Δ% cell: rounded to 0.1%, "~" when not significant, and with `mark_untested`
// "?" when it was not tested (a column with fewer than two per-seed values); a significant
// change of a metric with a better direction coloured better or worse.
std::string delta_td(const ReportCompareCell& cell, stats::Better better, bool mark_untested) {
  std::string delta = "-";
  std::string cls = "num";
  if (cell.delta_pct) {
    delta = delta_text(*cell.delta_pct);
    if (cell.significant.has_value() && !*cell.significant) {
      delta += "~";
      cls += " same";
    } else if (!cell.significant.has_value() && mark_untested) {
      delta += "?";
      cls += " same";
    } else if (cell.significant.value_or(false) && better != stats::Better::kNeutral &&
               *cell.delta_pct != 0.0) {
      const bool improved = (better == stats::Better::kLower) == (*cell.delta_pct < 0.0);
      cls += improved ? " better" : " worse";
    }
  }
  return "<td class=\"" + cls + "\">" + html_escape(delta) + "</td>";
}

// A table with a row per metric: each column's value ± ci95 and, after the first, its Δ%
// (delta_td() with `mark_untested`).
std::string metric_table(const ReportCompareTable& table, std::string_view id, bool mark_untested) {
  std::string html = fmt::format(
      "<div class=\"table-wrap\"><table id=\"{}\" class=\"compare-table\">\n"
      "<thead><tr><th>metric</th><th>unit</th>",
      id);
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    html += "<th class=\"num\">" + html_escape(table.columns[c]) + "</th>";
    if (c != 0) html += "<th class=\"num\">Δ%</th>";
  }
  html += "</tr></thead>\n<tbody>\n";
  for (const ReportCompareRow& row : table.rows) {
    html += "<tr><td>" + html_escape(row.label) + "</td><td>" + html_escape(row.unit) + "</td>";
    for (std::size_t c = 0; c < row.cells.size(); ++c) {
      html += "<td class=\"num\">" + html_escape(cell_value_text(row.cells[c])) + "</td>";
      if (c != 0) html += delta_td(row.cells[c], row.better, mark_untested);
    }
    html += "</tr>\n";
  }
  html += "</tbody></table></div>\n";
  return html;
}

std::string compare_table(const ReportCompareTable& table, std::size_t index) {
  std::string html = fmt::format(
      "<h3>{}</h3>\n<p class=\"meta\">scenario {} · topology {} · seeds {} · {} column(s){}</p>\n",
      html_escape(table.source), html_escape(table.scenario), html_escape(table.topology),
      html_escape(seeds_text(table.seeds)), table.columns.size(),
      table.varies.empty() ? "" : " · varies " + html_escape(table.varies));
  html += metric_table(table, fmt::format("table-compare-{}", index), table.seeds.size() >= 2);
  const std::string baseline = table.columns.empty() ? "" : table.columns.front();
  html += "<p class=\"note\">" +
          html_escape(table.seeds.size() >= 2
                          ? fmt::format("Mean ± 95% confidence half-width (Student's t) over {} "
                                        "seeds; Δ% against {}; ~ = not significant (Welch's "
                                        "t-test, 5% level), ? = not tested (fewer than two "
                                        "seeds gave a column the metric); significant changes "
                                        "are coloured by whether they are better or worse.",
                                        table.seeds.size(), baseline)
                          : fmt::format("One seed per column: no confidence interval or "
                                        "significance; Δ% against {}.",
                                        baseline)) +
          "</p>\n";
  return html;
}

// The inputs in the order given, each file once, with what it is.
std::string inputs_list(const ReportData& data) {
  std::vector<std::string> listed;
  std::string html = "<ul class=\"inputs\">\n";
  for (const ReportInput& input : data.inputs) {
    if (std::find(listed.begin(), listed.end(), input.source) != listed.end()) continue;
    listed.push_back(input.source);
    html += "<li><code>" + html_escape(input.source) + "</code>: " + html_escape(input.what) +
            "</li>\n";
  }
  html += "</ul>\n";
  return html;
}

// ---- sweeps ----

// The metrics of a sweep's chart and overview table, in this order, as far as it has them: the
// rate, the latency, and how often each class's calls stayed on the caller's CPU (what a thread
// selector changes).
constexpr std::array<std::string_view, 6> kSweepHeadline = {"throughput",
                                                            "latency.mean",
                                                            "latency.p50",
                                                            "latency.p99",
                                                            "tiers.sched_fifo.same_core.share",
                                                            "tiers.sched_other.same_core.share"};

// Rows of the sweep's tables (the same in every point) that kSweepHeadline names.
std::vector<std::size_t> headline_rows(const ReportSweep& sweep) {
  const std::vector<ReportCompareRow>& rows = sweep.points.front().table.rows;
  std::vector<std::size_t> out;
  for (const std::string_view key : kSweepHeadline) {
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (rows[r].key == key) out.push_back(r);
    }
  }
  return out;
}

// A point's axis values, " · " between them; "all runs" for a sweep without axes.
std::string point_label(const ReportSweepPoint& point) {
  std::string out;
  for (const std::string& value : point.axis_values) out += (out.empty() ? "" : " · ") + value;
  return out.empty() ? "all runs" : out;
}

// `text` cut to at most `width` of layout width (text_width()), "…" in place of what is cut;
// whole UTF-8 sequences only.
std::string fit_text(const std::string& text, double width) {
  if (text_width(text) <= width) return text;
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t next = i + 1;
    while (next < text.size() && (static_cast<unsigned char>(text[next]) & 0xC0) == 0x80) ++next;
    if (text_width(out + text.substr(i, next - i) + "…") > width) break;
    out += text.substr(i, next - i);
    i = next;
  }
  return out + "…";
}

// Values of the sweep chart are drawn within ±kMaxDrawn, so that an axis's span and every
// coordinate stay finite whatever numbers a summary holds.
constexpr double kMaxDrawn = 1e300;

// One panel of the sweep chart: a row per point, in it per column a dot at the pooled value
// and a whisker of ± its 95% confidence half-width.
void draw_sweep_panel(SvgWriter& svg, double cx, double cy, double width, double label_width,
                      double row_step, const ReportSweep& sweep, std::size_t row) {
  const ReportCompareRow& metric = sweep.points.front().table.rows[row];
  const double left = cx + label_width;
  const double right = cx + width - 16.0;
  const double top = cy + 26.0;
  const double bottom = top + row_step * static_cast<double>(sweep.points.size());
  const auto drawn = [](double value) { return std::clamp(value, -kMaxDrawn, kMaxDrawn); };
  double low = 0.0;
  double high = 0.0;
  bool any = false;
  for (const ReportSweepPoint& point : sweep.points) {
    for (const ReportCompareCell& cell : point.table.rows[row].cells) {
      if (!cell.mean) continue;
      const double half = cell.ci95.value_or(0.0);
      low = std::min(any ? low : kMaxDrawn, drawn(*cell.mean - half));
      high = std::max(any ? high : -kMaxDrawn, drawn(*cell.mean + half));
      any = true;
    }
  }
  svg.open_group("sweep-panel");
  svg.text(cx, cy + 16.0, metric.label + " (" + metric.unit + ")", "panel-title");
  const NiceAxis axis = any ? nice_axis(low, high, 4) : nice_axis(0.0, 1.0, 4);
  const LinearScale x(axis.min, axis.max, left, right);
  draw_x_axis(svg, x, axis, top, bottom, metric.unit);
  if (!any) {
    svg.text((left + right) / 2.0, (top + bottom) / 2.0, "no values", "note", Anchor::kMiddle);
  }
  const double lanes = static_cast<double>(sweep.column_labels.size());
  for (std::size_t p = 0; p < sweep.points.size(); ++p) {
    const ReportSweepPoint& point = sweep.points[p];
    const double row_top = top + row_step * static_cast<double>(p);
    const std::string label = point_label(point);
    // A label longer than its room is cut; the dots' tooltips and the overview keep it whole.
    svg.text(left - 6.0, row_top + row_step / 2.0 + 4.0, fit_text(label, label_width - 10.0),
             "bar-name", Anchor::kEnd);
    for (std::size_t c = 0; c < point.table.columns.size(); ++c) {
      const ReportCompareCell& cell = point.table.rows[row].cells[c];
      if (!cell.mean) continue;
      const std::size_t colour = point.sweep_columns[c];
      const double y =
          row_top + 3.0 + (static_cast<double>(colour) + 0.5) * (row_step - 6.0) / lanes;
      const double half = cell.ci95.value_or(0.0);
      if (half > 0.0) {
        // Beyond eight columns colours repeat; the whisker's dash and a hollow dot tell them
        // apart.
        svg.line(x(drawn(*cell.mean - half)), y, x(drawn(*cell.mean + half)), y,
                 "whisker " + series_stroke(colour));
      }
      std::string tooltip = fmt::format("{} at {}: {} {}", point.table.columns[c], label,
                                        cell_value_text(cell), metric.unit);
      if (c != 0 && cell.delta_pct) {
        tooltip += fmt::format(
            " (Δ {} against {}{})", delta_text(*cell.delta_pct), point.table.columns.front(),
            cell.significant.has_value() && !*cell.significant ? ", not significant" : "");
      }
      // The ninth column on draws hollow dots of the colours again.
      svg.circle(x(drawn(*cell.mean)), y, 3.5,
                 colour < kPalette ? "marker " + fill_class(colour)
                                   : "marker hollow stroke-" + std::to_string(colour % kPalette),
                 tooltip);
    }
  }
  svg.close_group();
}

// The sweep's headline metrics across its points, two panels side by side.
std::string sweep_chart(const ReportSweep& sweep, std::size_t index,
                        const std::vector<std::size_t>& rows) {
  constexpr double kLeft = 10.0;
  constexpr double kPanelWidth = (kWidth - 2.0 * kLeft) / 2.0;
  double label_width = 0.0;
  for (const ReportSweepPoint& point : sweep.points) {
    label_width = std::max(label_width, text_width(point_label(point)));
  }
  label_width = std::clamp(label_width + 12.0, 60.0, 200.0);
  const double row_step =
      std::max(20.0, 8.0 * static_cast<double>(sweep.column_labels.size()) + 8.0);
  const double panel_height = 26.0 + row_step * static_cast<double>(sweep.points.size()) + 46.0;

  std::vector<LegendItem> legend;
  for (std::size_t c = 0; c < sweep.column_labels.size(); ++c) {
    legend.push_back({sweep.column_labels[c], series_stroke(c), true});
  }
  SvgWriter probe("", kWidth, 0, "", "");
  const double top = draw_legend(probe, kLeft, 48.0, kWidth - kLeft, legend) + 4.0;
  const double panel_rows = static_cast<double>((rows.size() + 1) / 2);

  const std::string title = "Sweep " + sweep.name + " across its points";
  SvgWriter svg(fmt::format("chart-sweep-{}", index), kWidth, top + panel_rows * panel_height,
                title,
                "For each point of the sweep (its axis values), one dot per column at the pooled "
                "value of the metric, with a whisker of plus and minus the 95% confidence "
                "half-width of the per-seed values.");
  svg.text(kLeft, 22.0, title, "chart-title");
  draw_legend(svg, kLeft, 48.0, kWidth - kLeft, legend);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    draw_sweep_panel(svg, kLeft + static_cast<double>(k % 2) * kPanelWidth,
                     top + static_cast<double>(k / 2) * panel_height, kPanelWidth, label_width,
                     row_step, sweep, rows[k]);
  }
  return svg.finish();
}

// The overview of a sweep: a row per point, its axis values first; for each headline metric
// the first column's pooled value and each other column's Δ% against it.
std::string sweep_table(const ReportSweep& sweep, std::size_t index,
                        const std::vector<std::size_t>& rows) {
  const std::vector<std::string>& labels = sweep.column_labels;
  const std::string& baseline = labels.front();
  std::string html = fmt::format(
      "<div class=\"table-wrap\"><table id=\"table-sweep-{}\" class=\"compare-table\">\n"
      "<thead><tr>",
      index);
  for (const std::string& axis : sweep.axes) {
    html += "<th rowspan=\"2\">" + html_escape(axis) + "</th>";
  }
  if (sweep.axes.empty()) html += "<th rowspan=\"2\">point</th>";
  const std::vector<ReportCompareRow>& metrics = sweep.points.front().table.rows;
  for (const std::size_t r : rows) {
    html += fmt::format("<th class=\"num group\" colspan=\"{}\">{}</th>", labels.size(),
                        html_escape(metrics[r].label + " (" + metrics[r].unit + ")"));
  }
  html += "</tr>\n<tr>";
  for (std::size_t k = 0; k < rows.size(); ++k) {
    html += "<th class=\"num\">" + html_escape(baseline) + "</th>";
    for (std::size_t c = 1; c < labels.size(); ++c) {
      html += "<th class=\"num\">" + html_escape(labels[c]) + " Δ%</th>";
    }
  }
  html += "</tr></thead>\n<tbody>\n";
  for (const ReportSweepPoint& point : sweep.points) {
    html += "<tr>";
    for (const std::string& value : point.axis_values) {
      html += "<td>" + html_escape(value) + "</td>";
    }
    if (sweep.axes.empty()) html += "<td>all runs</td>";
    // Δ% cells are against the point's first column: shown only when that is the baseline.
    const bool has_baseline = point.sweep_columns.front() == 0;
    const bool several_seeds = point.table.seeds.size() >= 2;
    for (const std::size_t r : rows) {
      const std::vector<ReportCompareCell>& cells = point.table.rows[r].cells;
      ReportCompareCell base;
      if (has_baseline) base.mean = cells.front().mean;
      html += "<td class=\"num\">" + html_escape(cell_value_text(base)) + "</td>";
      for (std::size_t c = 1; c < labels.size(); ++c) {
        const auto it = std::find(point.sweep_columns.begin(), point.sweep_columns.end(), c);
        if (!has_baseline || it == point.sweep_columns.end()) {
          html += "<td class=\"num\">-</td>";
          continue;
        }
        html += delta_td(cells[static_cast<std::size_t>(it - point.sweep_columns.begin())],
                         point.table.rows[r].better, several_seeds);
      }
    }
    html += "</tr>\n";
  }
  html += "</tbody></table></div>\n";
  return html;
}

// One sweep: what it is, its chart and overview table, then every point's full table.
std::string sweep_block(const ReportSweep& sweep, std::size_t index) {
  std::vector<std::uint64_t> seeds;
  for (const ReportSweepPoint& point : sweep.points) {
    for (const std::uint64_t seed : point.table.seeds) {
      if (std::find(seeds.begin(), seeds.end(), seed) == seeds.end()) seeds.push_back(seed);
    }
  }
  std::sort(seeds.begin(), seeds.end());
  std::string runs = fmt::format("{} run(s) merged", sweep.merged);
  if (sweep.listed) runs += fmt::format(" of {} listed", *sweep.listed);
  if (sweep.ignored != 0) runs += fmt::format(", {} ignored", sweep.ignored);
  std::string html = fmt::format(
      "<h3>sweep {}</h3>\n<p class=\"meta\">{} · scenario {} · topology {} · {} point(s) × {} "
      "column(s) · seeds {} · {}</p>\n",
      html_escape(sweep.name), html_escape(sweep.source),
      html_escape(sweep.scenario.empty() ? "-" : sweep.scenario),
      html_escape(sweep.topology.empty() ? "-" : sweep.topology), sweep.points.size(),
      sweep.column_labels.size(), html_escape(seeds_text(seeds)), html_escape(runs));
  if (sweep.missing != 0) {
    html += fmt::format(
        "<p class=\"missing\">{} run(s) of the sweep have no result: the points they belong to "
        "pool fewer seeds (listed under each point's table below).</p>\n",
        sweep.missing);
  }
  const std::vector<std::size_t> rows = headline_rows(sweep);
  if (!rows.empty()) {
    html += "<figure>\n" + sweep_chart(sweep, index, rows) + "</figure>\n";
    html += sweep_table(sweep, index, rows);
    html += "<p class=\"note\">" +
            html_escape(fmt::format(
                "{}'s pooled value (every seed's calls as one run: percentiles from the merged "
                "histograms) and each other column's Δ% against it at the same point; ~ = not "
                "significant (Welch's t-test of the per-seed values, 5% level), ? = not tested (a "
                "column with fewer than two seeds' values), no mark at a point with one seed; - "
                "where a point lacks the column or {}.",
                sweep.column_labels.front(), sweep.column_labels.front())) +
            "</p>\n";
  }
  html += fmt::format("<details>\n<summary>Every metric at each point ({} table(s))</summary>\n",
                      sweep.points.size());
  for (std::size_t p = 0; p < sweep.points.size(); ++p) {
    const ReportSweepPoint& point = sweep.points[p];
    std::string seeds_line;
    for (std::size_t c = 0; c < point.table.columns.size(); ++c) {
      seeds_line += fmt::format("{}{} seeds {}", c == 0 ? "" : " · ", point.table.columns[c],
                                seeds_text(point.column_seeds[c]));
      if (!point.missing_seeds[c].empty()) {
        seeds_line += fmt::format(" (missing {})", seeds_text(point.missing_seeds[c]));
      }
      // Seeds other columns of the point have and this one neither merged nor lists as
      // missing (a sweep merged without its runs file).
      std::vector<std::uint64_t> lacking;
      for (const std::uint64_t seed : point.table.seeds) {
        const auto has = [seed](const std::vector<std::uint64_t>& list) {
          return std::find(list.begin(), list.end(), seed) != list.end();
        };
        if (!has(point.column_seeds[c]) && !has(point.missing_seeds[c])) lacking.push_back(seed);
      }
      if (!lacking.empty()) seeds_line += fmt::format(" (no result for {})", seeds_text(lacking));
    }
    std::string heading;
    for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
      heading += (a == 0 ? "" : ", ") + sweep.axes[a] + "=" + point.axis_values[a];
    }
    html += "<h4>" + html_escape(heading.empty() ? "all runs" : heading) +
            "</h4>\n<p class=\"meta\">" + html_escape(seeds_line) + "</p>\n";
    html += metric_table(point.table, fmt::format("table-sweep-{}-point-{}", index, p),
                         point.table.seeds.size() >= 2);
  }
  html +=
      "<p class=\"note\">Each value is the column's pooled run ± the 95% confidence half-width "
      "of its per-seed values (Student's t); Δ% against the point's first column, ~ = not "
      "significant (Welch's t-test, 5% level), ? = not tested (a column with fewer than two "
      "seeds' values); significant changes are coloured by whether they are better or worse. A "
      "column with one seed has no interval.</p>\n</details>\n";
  return html;
}

}  // namespace

void write_report_html(const ReportData& data, const ReportOptions& options, std::ostream& out) {
  BSIM_CHECK(!data.policies.empty() || !data.sweeps.empty());
  std::vector<std::string> scenarios;
  std::vector<std::string> topologies;
  for (const ReportPolicy& p : data.policies) {
    scenarios.push_back(p.scenario);
    topologies.push_back(p.topology);
  }
  for (const ReportSweep& sweep : data.sweeps) {
    if (!sweep.scenario.empty()) scenarios.push_back(sweep.scenario);
    if (!sweep.topology.empty()) topologies.push_back(sweep.topology);
  }
  std::string scenario_text = distinct_joined(scenarios);
  if (scenario_text.empty()) scenario_text = "-";
  std::string topology_text = distinct_joined(topologies);
  if (topology_text.empty()) topology_text = "-";
  std::string title = options.title;
  if (title.empty()) {
    // A page of sweeps whose runs all went missing names no scenario: it names its sweeps.
    std::vector<std::string> sweep_names;
    for (const ReportSweep& sweep : data.sweeps) sweep_names.push_back("sweep " + sweep.name);
    title =
        "bindersim report: " + (scenarios.empty() ? distinct_joined(sweep_names) : scenario_text);
  }
  // "2 policies · 1 sweep(s)", leaving out a kind the inputs do not have.
  std::string contents = data.policies.empty()
                             ? ""
                             : fmt::format("{} polic{}", data.policies.size(),
                                           data.policies.size() == 1 ? "y" : "ies");
  if (!data.sweeps.empty()) {
    contents += fmt::format("{}{} sweep(s)", contents.empty() ? "" : " · ", data.sweeps.size());
  }

  std::string html;
  html +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"color-scheme\" content=\"light dark\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'\">\n";
  html += "<title>" + html_escape(title) + "</title>\n<style>" + std::string(kStyle) +
          "</style>\n</head>\n<body>\n";
  html += "<header>\n<h1>" + html_escape(title) + "</h1>\n";
  html += "<p class=\"meta\">" +
          html_escape(fmt::format("{} · scenario {} · topology {}", contents, scenario_text,
                                  topology_text)) +
          "</p>\n</header>\n";

  html += "<section id=\"inputs\">\n<h2>Inputs and policies</h2>\n" + inputs_list(data);
  if (data.policies.empty()) {
    html +=
        "<p class=\"note\">No result or compare document among the inputs: the page shows the "
        "sweeps alone.</p>\n</section>\n";
  } else {
    html += policy_table(data) +
            "<p class=\"note\">Calls are completed two-way calls summed over the seeds; "
            "throughput is per simulated second; latencies are the round trip as the client "
            "sees it, p50 and p99 averaged over the seeds.</p>\n</section>\n";

    html +=
        "<section id=\"tier-shares\">\n<h2>Tier shares</h2>\n<p>Where the server thread "
        "started handling each two-way call, relative to the caller's CPU, per scheduling "
        "class of the caller. Shares pool the calls of every seed.</p>\n<figure>\n" +
        tier_share_chart(data) + "</figure>\n</section>\n";

    html +=
        "<section id=\"latency-cdf\">\n<h2>Latency distribution</h2>\n<p>The result JSON "
        "carries only a few quantiles per tier (p50, p90, p99, max; all calls also carry the "
        "minimum), so each CDF is drawn through those points.</p>\n<figure>\n" +
        cdf_chart(data) + "</figure>\n</section>\n";

    html +=
        "<section id=\"breakdown\">\n<h2>Latency breakdown</h2>\n<p>Mean time per call in "
        "each part of the round trip (each tier's <code>breakdown</code>), weighted by the "
        "calls of each seed.</p>\n<figure>\n" +
        breakdown_chart(data) + "</figure>\n</section>\n";

    html += cpu_section(data);

    html += "<section id=\"compare\">\n<h2>Comparison tables</h2>\n";
    if (data.compares.empty()) {
      html +=
          "<p class=\"note\">No compare document among the inputs (write one with "
          "<code>bindersim compare --out</code>).</p>\n";
    }
    for (std::size_t i = 0; i < data.compares.size(); ++i) {
      html += compare_table(data.compares[i], i);
    }
    html += "</section>\n";
  }

  if (!data.sweeps.empty()) {
    html +=
        "<section id=\"sweeps\">\n<h2>Sweeps</h2>\n<p>Each sweep summary's points (one per "
        "combination of its axis values) with every column pooled over its seeds.</p>\n";
    for (std::size_t i = 0; i < data.sweeps.size(); ++i) html += sweep_block(data.sweeps[i], i);
    html += "</section>\n";
  }

  html += "<footer>\n<p>Generated by bindersim " + html_escape(BINDERSIM_VERSION) + " from " +
          contents +
          ". Self-contained: no scripts, no external resources.</p>\n</footer>\n</body>\n"
          "</html>\n";
  out << html;
}

}  // namespace bindersim::io
