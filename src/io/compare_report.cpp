#include "bindersim/io/compare_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "bindersim/common/json_reader.hpp"

namespace bindersim::io {

namespace {

using nlohmann::ordered_json;

constexpr std::string_view kNotSignificantMark = "~";
constexpr std::string_view kUntestedMark = "?";

}  // namespace

std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char ch) {
    return (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  }));
}

std::string pad_left(const std::string& text, std::size_t width) {
  const std::size_t w = display_width(text);
  return w >= width ? text : std::string(width - w, ' ') + text;
}

std::string pad_right(const std::string& text, std::size_t width) {
  const std::size_t w = display_width(text);
  return w >= width ? text : text + std::string(width - w, ' ');
}

std::string group_thousands(std::string_view number) {
  const std::size_t first_digit = !number.empty() && number[0] == '-' ? 1 : 0;
  const std::size_t point = std::min(number.find('.'), number.size());
  std::string out(number.substr(0, first_digit));
  for (std::size_t i = first_digit; i < point; ++i) {
    if (i != first_digit && (point - i) % 3 == 0) out.push_back(',');
    out.push_back(number[i]);
  }
  out.append(number.substr(point));
  return out;
}

std::string group_thousands(std::uint64_t count) { return group_thousands(std::to_string(count)); }

int four_significant_decimals(double x) {
  const double a = std::fabs(x);
  if (a >= 100.0 || a == 0.0) return 1;
  if (a >= 10.0) return 2;
  if (a >= 1.0) return 3;
  return 4;
}

namespace {

// x with `decimals` decimals and grouped thousands: 41045.06, 1 -> "41,045.1". A value that
// rounds to zero is printed without a sign.
std::string grouped(double x, int decimals) {
  std::string text = fmt::format("{:.{}f}", x, decimals);
  if (!text.empty() && text[0] == '-' && text.find_first_not_of("-0.") == std::string::npos) {
    text.erase(0, 1);
  }
  return group_thousands(text);
}

}  // namespace

std::string mean_cell(const stats::ColumnStats& s, bool with_ci) {
  if (!s.mean) return "-";
  const int decimals = four_significant_decimals(*s.mean);
  std::string cell = grouped(*s.mean, decimals);
  if (with_ci && s.ci95) cell += " ± " + grouped(*s.ci95, decimals);
  return cell;
}

std::string delta_cell(const stats::ColumnStats& s, bool several_seeds) {
  if (!s.delta_pct) return "-";
  double rounded = std::round(*s.delta_pct * 10.0) / 10.0;
  if (rounded == 0.0) rounded = 0.0;  // no "-0.0"
  std::string cell = fmt::format("{:+.1f}%", rounded);
  if (several_seeds && !s.significant) {
    cell += kUntestedMark;
  } else if (several_seeds && !*s.significant) {
    cell += kNotSignificantMark;
  }
  return cell;
}

namespace {

// Distinct values of a column field, in column order, joined by ",".
template <typename Field>
std::string distinct_joined(const CompareReport& report, Field field) {
  std::vector<std::string> seen;
  for (const CompareColumn& column : report.columns) {
    const std::string& value = column.*field;
    if (std::find(seen.begin(), seen.end(), value) == seen.end()) seen.push_back(value);
  }
  std::string out;
  for (const std::string& value : seen) out += (out.empty() ? "" : ",") + value;
  return out;
}

}  // namespace

std::string seeds_text(const std::vector<std::uint64_t>& seeds) {
  if (seeds.empty()) return "seeds none";
  if (seeds.size() == 1) return fmt::format("seed {}", seeds[0]);
  bool consecutive = true;
  for (std::size_t i = 1; i < seeds.size(); ++i) consecutive &= seeds[i] == seeds[i - 1] + 1;
  if (consecutive) return fmt::format("seeds {}..{}", seeds.front(), seeds.back());
  std::string out = "seeds ";
  for (std::size_t i = 0; i < seeds.size(); ++i) out += fmt::format("{}{}", i ? "," : "", seeds[i]);
  return out;
}

ordered_json summary_value_json(const std::optional<double>& x) {
  if (!x) return nullptr;
  double r = std::round(*x * kSummaryScale) / kSummaryScale;
  if (r == 0.0) r = 0.0;
  return r;
}

std::string report_topology(const CompareReport& report) {
  return distinct_joined(report, &CompareColumn::topology);
}

std::string report_placement(const CompareReport& report) {
  return distinct_joined(report, &CompareColumn::placement);
}

std::string report_varied_paths(const CompareReport& report) {
  std::vector<std::string> paths;
  const auto value_in = [](const CompareColumn& column,
                           const std::string& path) -> const nlohmann::ordered_json* {
    for (const auto& [p, value] : column.overrides) {
      if (p == path) return &value;
    }
    return nullptr;
  };
  for (const CompareColumn& column : report.columns) {
    for (const auto& [path, value] : column.overrides) {
      if (std::find(paths.begin(), paths.end(), path) != paths.end()) continue;
      const bool varies = std::any_of(report.columns.begin(), report.columns.end(),
                                      [&](const CompareColumn& other) {
                                        const nlohmann::ordered_json* v = value_in(other, path);
                                        return v == nullptr || *v != value;
                                      });
      if (varies) paths.push_back(path);
    }
  }
  std::string out;
  for (const std::string& path : paths) out += (out.empty() ? "" : ", ") + path;
  return out;
}

void print_compare_table(const CompareReport& report, std::ostream& out) {
  const std::size_t num_columns = report.columns.size();
  // Names may come from input files (sweep merge reads them from run records): control
  // characters are escaped.
  out << fmt::format("scenario {} | topology {} | placement {} | {}", console_text(report.scenario),
                     console_text(report_topology(report)), console_text(report_placement(report)),
                     seeds_text(report.seeds));
  // What the columns' values in the labels are values of.
  if (const std::string varied = report_varied_paths(report); !varied.empty()) {
    out << " | varies " << console_text(varied);
  }
  out << "\n";
  if (num_columns == 0) return;

  // Render every cell first so that each column is as wide as its widest cell.
  std::size_t label_width = display_width("metric");
  std::size_t unit_width = display_width("unit");
  std::vector<std::size_t> value_width(num_columns);
  std::vector<std::size_t> delta_width(num_columns, display_width("Δ%"));
  std::vector<std::string> labels;
  for (std::size_t c = 0; c < num_columns; ++c) {
    labels.push_back(console_text(report.columns[c].label));
    value_width[c] = display_width(labels.back());
  }
  std::vector<std::vector<std::string>> values(report.summary.size());
  std::vector<std::vector<std::string>> deltas(report.summary.size());
  const bool several_seeds = report.seeds.size() >= 2;
  bool any_untested = false;
  for (std::size_t m = 0; m < report.summary.size(); ++m) {
    const stats::MetricSummary& row = report.summary[m];
    BSIM_CHECK(row.columns.size() == num_columns);
    label_width = std::max(label_width, display_width(row.metric.label));
    unit_width = std::max(unit_width, display_width(row.metric.unit));
    for (std::size_t c = 0; c < num_columns; ++c) {
      values[m].push_back(mean_cell(row.columns[c], /*with_ci=*/true));
      value_width[c] = std::max(value_width[c], display_width(values[m].back()));
      deltas[m].push_back(c == 0 ? "" : delta_cell(row.columns[c], several_seeds));
      const stats::ColumnStats& s = row.columns[c];
      any_untested |= c != 0 && several_seeds && s.delta_pct && !s.significant;
      delta_width[c] = std::max(delta_width[c], display_width(deltas[m].back()));
    }
  }

  auto line_of = [&](const std::string& label, const std::string& unit,
                     const std::vector<std::string>& cells, const std::vector<std::string>& ds) {
    std::string line = pad_right(label, label_width + kGap) + pad_right(unit, unit_width);
    for (std::size_t c = 0; c < num_columns; ++c) {
      line += pad_left(cells[c], value_width[c] + kGap);
      // A Δ% cell keeps a column for its mark, so that marked and unmarked values align.
      if (c != 0) line += pad_left(ds[c], delta_width[c] + kGap);
    }
    // Trailing spaces are not part of the table.
    line.erase(line.find_last_not_of(' ') + 1);
    return line;
  };

  const std::vector<std::string> delta_heads(num_columns, "Δ%");
  const std::string heading = line_of("metric", "unit", labels, delta_heads);
  out << heading << '\n' << std::string(display_width(heading), '-') << '\n';
  for (std::size_t m = 0; m < report.summary.size(); ++m) {
    out << line_of(report.summary[m].metric.label, report.summary[m].metric.unit, values[m],
                   deltas[m])
        << '\n';
  }

  // Its own line, before the legend (sweep merge writes a legend of its own in its place).
  if (any_untested) {
    out << fmt::format("{} = not tested: fewer than two seeds gave the metric a value\n",
                       kUntestedMark);
  }
  const std::string& baseline = labels[0];
  if (several_seeds) {
    out << fmt::format("mean ± 95% confidence half-width (Student's t) over {} seeds",
                       report.seeds.size());
    if (num_columns > 1) {
      out << fmt::format("; Δ% against {}; {} = not significant (Welch's t-test, 5% level)",
                         baseline, kNotSignificantMark);
    }
  } else {
    out << "one seed per column: no confidence interval or significance";
    if (num_columns > 1) out << fmt::format("; Δ% against {}", baseline);
  }
  out << '\n';
}

ordered_json compare_to_json(const CompareReport& report) {
  ordered_json j = ordered_json::object();
  j["schema"] = kCompareSchema;
  j["scenario"] = report.scenario;
  j["topology"] = report_topology(report);
  j["seeds"] = report.seeds;

  ordered_json& columns = j["columns"];
  columns = ordered_json::array();
  for (const CompareColumn& column : report.columns) {
    ordered_json c = ordered_json::object();
    c["label"] = column.label;
    c["selector"] = column.selector;
    ordered_json& overrides = c["overrides"];
    overrides = ordered_json::object();
    for (const auto& [path, value] : column.overrides) overrides[path] = value;
    columns.push_back(std::move(c));
  }

  ordered_json& runs = j["runs"];
  runs = ordered_json::array();
  for (const CompareRun& run : report.runs) {
    ordered_json r = ordered_json::object();
    r["column"] = run.column;
    r["seed"] = run.seed;
    r["result"] = run.result;
    runs.push_back(std::move(r));
  }

  ordered_json& summary = j["summary"];
  summary = ordered_json::object();
  for (const stats::MetricSummary& row : report.summary) {
    ordered_json& metric = summary[row.metric.key];
    metric["unit"] = row.metric.unit;
    metric["better"] = stats::better_name(row.metric.better);
    ordered_json& cells = metric["columns"];
    cells = ordered_json::array();
    for (std::size_t c = 0; c < row.columns.size(); ++c) {
      const stats::ColumnStats& s = row.columns[c];
      ordered_json cell = ordered_json::object();
      cell["label"] = c < report.columns.size() ? report.columns[c].label : std::string();
      cell["mean"] = summary_value_json(s.mean);
      cell["ci95"] = summary_value_json(s.ci95);
      cell["delta_pct"] = summary_value_json(s.delta_pct);
      cell["significant"] = s.significant ? ordered_json(*s.significant) : ordered_json(nullptr);
      cells.push_back(std::move(cell));
    }
  }
  return j;
}

void write_compare_json(const CompareReport& report, std::ostream& out) {
  out << compare_to_json(report).dump(2, ' ', false, ordered_json::error_handler_t::replace)
      << '\n';
}

std::vector<std::vector<SweepColumnKey>> sweep_overview_keys(
    const std::vector<std::vector<SweepColumnKey>>& points,
    const std::vector<std::vector<nlohmann::json>>& axis_values) {
  BSIM_CHECK(points.size() == axis_values.size());
  // True when one of `values` gives `value` to the part named `member`.
  const auto given = [](const std::vector<nlohmann::json>& values, const char* member,
                        const std::string& value) {
    return std::any_of(values.begin(), values.end(), [&](const nlohmann::json& v) {
      const nlohmann::json* held = v.is_object() && v.contains(member) ? &v.at(member) : &v;
      return held->is_string() && held->get_ref<const std::string&>() == value;
    });
  };
  const auto set_by_axes = [&](std::string SweepColumnKey::*part, const char* member) {
    std::set<std::string> across;
    for (std::size_t p = 0; p < points.size(); ++p) {
      if (points[p].empty()) continue;
      const std::string& value = points[p].front().*part;
      for (const SweepColumnKey& key : points[p]) {
        if (key.*part != value) return false;
      }
      if (!given(axis_values[p], member, value)) return false;
      across.insert(value);
    }
    return across.size() > 1;
  };
  const bool drop_selector = set_by_axes(&SweepColumnKey::first, "selector");
  const bool drop_placement = set_by_axes(&SweepColumnKey::second, "placement");
  std::vector<std::vector<SweepColumnKey>> out = points;
  for (std::vector<SweepColumnKey>& keys : out) {
    for (SweepColumnKey& key : keys) {
      if (drop_selector) key.first.clear();
      if (drop_placement) key.second.clear();
    }
  }
  return out;
}

std::vector<SweepColumnKey> sweep_column_order(
    const std::vector<std::vector<SweepColumnKey>>& points) {
  std::vector<SweepColumnKey> keys;
  for (const std::vector<SweepColumnKey>& columns : points) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      if (std::find(keys.begin(), keys.end(), columns[i]) != keys.end()) continue;
      // Before the first column listed already that follows it in this point.
      auto at = keys.end();
      for (std::size_t j = i + 1; j < columns.size() && at == keys.end(); ++j) {
        at = std::find(keys.begin(), keys.end(), columns[j]);
      }
      keys.insert(at, columns[i]);
    }
  }
  return keys;
}

std::vector<std::string> sweep_column_labels(const std::vector<SweepColumnKey>& keys) {
  std::vector<std::string> labels;
  for (const SweepColumnKey& key : keys) {
    const bool several = std::count_if(keys.begin(), keys.end(), [&](const SweepColumnKey& k) {
                           return k.first == key.first;
                         }) > 1;
    if (key.first.empty()) {
      labels.push_back(key.second.empty() ? "all" : key.second);
    } else {
      labels.push_back(several ? key.first + " " + key.second : key.first);
    }
  }
  return labels;
}

}  // namespace bindersim::io
