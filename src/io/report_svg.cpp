#include "bindersim/io/report_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "bindersim/common/error.hpp"

namespace bindersim::io {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// Length of the well-formed UTF-8 sequence starting at text[i] (RFC 3629: no overlong forms,
// no surrogates, nothing above U+10FFFF), or 0 when it is not one.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  unsigned char second_min = 0x80;
  unsigned char second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;
    if (lead == 0xED) second_max = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;
    if (lead == 0xF4) second_max = 0x8F;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(1) < second_min || byte(1) > second_max) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (!is_continuation(byte(k))) return 0;
  }
  return length;
}

std::string_view anchor_name(Anchor anchor) {
  switch (anchor) {
    case Anchor::kStart:
      return "start";
    case Anchor::kMiddle:
      return "middle";
    case Anchor::kEnd:
      return "end";
  }
  return "start";
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        case '"':
          out += "&quot;";
          break;
        case '\'':
          out += "&#39;";
          break;
        case '\t':
        case '\n':
          out.push_back(static_cast<char>(c));
          break;
        default:
          if (c < 0x20 || c == 0x7F) {
            out += kReplacement;
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string format_fixed(double value, int decimals) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::string text = fmt::format("{:.{}f}", value, std::clamp(decimals, 0, 9));
  if (text[0] == '-' && text.find_first_not_of("-0.") == std::string::npos) text.erase(0, 1);
  return text;
}

std::string format_coord(double value) {
  std::string text = format_fixed(value, 2);
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

LinearScale::LinearScale(double domain_min, double domain_max, double range_min, double range_max)
    : domain_min_(domain_min),
      domain_max_(domain_max),
      range_min_(range_min),
      range_max_(range_max) {}

double LinearScale::operator()(double value) const {
  if (domain_max_ == domain_min_) return range_min_;
  return range_min_ +
         (value - domain_min_) / (domain_max_ - domain_min_) * (range_max_ - range_min_);
}

NiceAxis nice_axis(double low, double high, int target_ticks) {
  BSIM_CHECK(std::isfinite(low) && std::isfinite(high));
  if (low > high) std::swap(low, high);
  BSIM_CHECK(std::isfinite(high - low));  // an infinite step would never become a fraction
  if (low == high) {
    const double margin = low == 0.0 ? 1.0 : std::fabs(low) / 10.0;
    if (low == 0.0) {
      high = 1.0;
    } else {
      low -= margin;
      high += margin;
    }
  }
  const double raw_step = (high - low) / std::max(target_ticks, 1);
  // raw_step = fraction * 10^exponent with fraction in [1, 10), found without log10 so that
  // the axis does not depend on the math library.
  int exponent = 0;
  double fraction = raw_step;
  while (fraction >= 10.0) {
    fraction /= 10.0;
    ++exponent;
  }
  while (fraction < 1.0) {
    fraction *= 10.0;
    --exponent;
  }
  int nice = fraction <= 1.0 ? 1 : fraction <= 2.0 ? 2 : fraction <= 5.0 ? 5 : 10;
  if (nice == 10) {
    nice = 1;
    ++exponent;
  }
  // A multiple k of the step is k * nice * 10^exponent; for negative exponents it is divided
  // by the exact power of ten, so that 3 * 0.1 prints as 0.3.
  double power = 1.0;
  for (int e = 0; e < std::abs(exponent); ++e) power *= 10.0;
  const auto multiple = [&](double k) {
    return exponent >= 0 ? k * nice * power : k * nice / power;
  };
  const double step = multiple(1.0);
  const double first = std::floor(low / step);
  double last = std::ceil(high / step);
  if (last == first) last = first + 1.0;

  NiceAxis axis;
  axis.step = step;
  axis.decimals = std::max(0, -exponent);
  axis.min = multiple(first);
  axis.max = multiple(last);
  for (double k = first; k <= last; k += 1.0) {
    const double tick = multiple(k);
    axis.ticks.push_back(tick == 0.0 ? 0.0 : tick);  // no -0
  }
  return axis;
}

SvgWriter::SvgWriter(std::string id, double width, double height, std::string_view title,
                     std::string_view description)
    : id_(std::move(id)),
      width_(width),
      height_(height),
      title_(title),
      description_(description) {}

void SvgWriter::rect(double x, double y, double w, double h, std::string_view cls,
                     std::string_view tooltip) {
  body_ += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" class="{}")", format_coord(x),
                       format_coord(y), format_coord(std::max(w, 0.0)),
                       format_coord(std::max(h, 0.0)), html_escape(cls));
  if (tooltip.empty()) {
    body_ += "/>\n";
  } else {
    body_ += "><title>";
    body_ += html_escape(tooltip);
    body_ += "</title></rect>\n";
  }
}

void SvgWriter::line(double x1, double y1, double x2, double y2, std::string_view cls) {
  body_ += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" class="{}"/>)", format_coord(x1),
                       format_coord(y1), format_coord(x2), format_coord(y2), html_escape(cls)) +
           "\n";
}

void SvgWriter::polyline(const std::vector<std::pair<double, double>>& points,
                         std::string_view cls) {
  if (points.size() < 2) return;
  std::string list;
  for (const auto& [x, y] : points) {
    if (!list.empty()) list.push_back(' ');
    list += format_coord(x) + "," + format_coord(y);
  }
  body_ += fmt::format(R"(<polyline points="{}" class="{}"/>)", list, html_escape(cls)) + "\n";
}

void SvgWriter::circle(double cx, double cy, double r, std::string_view cls,
                       std::string_view tooltip) {
  body_ += fmt::format(R"(<circle cx="{}" cy="{}" r="{}" class="{}")", format_coord(cx),
                       format_coord(cy), format_coord(r), html_escape(cls));
  if (tooltip.empty()) {
    body_ += "/>\n";
  } else {
    body_ += "><title>";
    body_ += html_escape(tooltip);
    body_ += "</title></circle>\n";
  }
}

void SvgWriter::text(double x, double y, std::string_view content, std::string_view cls,
                     Anchor anchor, double rotate) {
  body_ += fmt::format(R"(<text x="{}" y="{}" class="{}")", format_coord(x), format_coord(y),
                       html_escape(cls));
  if (anchor != Anchor::kStart) body_ += fmt::format(R"( text-anchor="{}")", anchor_name(anchor));
  if (rotate != 0.0) {
    body_ += fmt::format(R"svg( transform="rotate({} {} {})")svg", format_coord(rotate),
                         format_coord(x), format_coord(y));
  }
  body_.push_back('>');
  body_ += html_escape(content);
  body_ += "</text>\n";
}

void SvgWriter::open_group(std::string_view cls) {
  body_ += "<g class=\"";
  body_ += html_escape(cls);
  body_ += "\">\n";
  ++open_groups_;
}

void SvgWriter::close_group() {
  BSIM_CHECK(open_groups_ > 0);
  body_ += "</g>\n";
  --open_groups_;
}

std::string SvgWriter::finish() const {
  BSIM_CHECK(open_groups_ == 0);
  const std::string id = html_escape(id_);
  return fmt::format(
             R"(<svg id="{0}" class="chart" viewBox="0 0 {1} {2}" width="{1}" height="{2}" )"
             R"(role="img" aria-labelledby="{0}-title {0}-desc">)",
             id, format_coord(width_), format_coord(height_)) +
         "\n<title id=\"" + id + "-title\">" + html_escape(title_) + "</title>\n<desc id=\"" + id +
         "-desc\">" + html_escape(description_) + "</desc>\n" + body_ + "</svg>\n";
}

}  // namespace bindersim::io
