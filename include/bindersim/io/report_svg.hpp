// Building blocks of the HTML report: HTML/SVG escaping, deterministic number text, linear
// scales with round ticks, and a small writer of inline SVG elements.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bindersim::io {

// Escapes text for HTML and SVG content and for quoted attribute values: & < > " ' become
// character references. Invalid UTF-8 and control characters other than tab and newline
// become U+FFFD, so any input gives well-formed markup.
std::string html_escape(std::string_view text);

// `value` with exactly `decimals` decimals (0..9), without a "-0": format_fixed(-0.001, 2) is
// "0.00". Non-finite values give "nan", "inf" or "-inf".
std::string format_fixed(double value, int decimals);

// An SVG coordinate or length: two decimals at most, trailing zeros dropped ("12.5", "3").
std::string format_coord(double value);

// Maps the domain [domain_min, domain_max] linearly onto [range_min, range_max] (pixels). The
// range may run backwards, as a y axis does. An empty domain (min == max) maps everything to
// range_min.
class LinearScale {
 public:
  LinearScale(double domain_min, double domain_max, double range_min, double range_max);

  double operator()(double value) const;
  double domain_min() const { return domain_min_; }
  double domain_max() const { return domain_max_; }
  double range_min() const { return range_min_; }
  double range_max() const { return range_max_; }

 private:
  double domain_min_;
  double domain_max_;
  double range_min_;
  double range_max_;
};

// An axis with round ticks: min and max are multiples of step, step is 1, 2 or 5 times a power
// of ten, and ticks run from min to max by step (about `target_ticks` + 1 of them).
struct NiceAxis {
  double min = 0.0;
  double max = 1.0;
  double step = 1.0;
  int decimals = 0;  // decimals that print every tick exactly
  std::vector<double> ticks;
};

// The smallest round axis that covers [low, high] (swapped when given backwards; both finite,
// and so must their difference be). An empty interval is widened to one unit around it ([0, 1]
// for [0, 0]); target_ticks below 1 counts as 1.
NiceAxis nice_axis(double low, double high, int target_ticks);

// Text anchor of an SVG <text>.
enum class Anchor { kStart, kMiddle, kEnd };

// Builds one inline <svg> element: a titled, described image (role="img") with a viewBox of
// width x height user units that scales to the page width. Every text and attribute given to
// it is escaped; class names are the report's CSS classes.
class SvgWriter {
 public:
  SvgWriter(std::string id, double width, double height, std::string_view title,
            std::string_view description);

  // A rectangle; a non-empty `tooltip` becomes its <title> (shown on hover).
  void rect(double x, double y, double w, double h, std::string_view cls,
            std::string_view tooltip = {});
  void line(double x1, double y1, double x2, double y2, std::string_view cls);
  // An open polyline through `points` (x, y); fewer than two points draw nothing.
  void polyline(const std::vector<std::pair<double, double>>& points, std::string_view cls);
  void circle(double cx, double cy, double r, std::string_view cls, std::string_view tooltip = {});
  // Text at (x, y) on its baseline; `rotate` degrees about (x, y) (-90 for a y-axis label).
  void text(double x, double y, std::string_view content, std::string_view cls,
            Anchor anchor = Anchor::kStart, double rotate = 0.0);
  // Groups the elements written until close_group() under one class.
  void open_group(std::string_view cls);
  void close_group();

  // The finished element, "<svg ...>...</svg>\n". Groups must be closed.
  std::string finish() const;

 private:
  std::string id_;
  double width_;
  double height_;
  std::string title_;
  std::string description_;
  std::string body_;
  int open_groups_ = 0;
};

}  // namespace bindersim::io
