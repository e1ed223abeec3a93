#include "bindersim/io/report_svg.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace bindersim::io {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

std::size_t occurrences(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(HtmlEscape, MarkupCharactersBecomeReferences) {
  // The five characters that can end text or an attribute value are replaced; nothing of the
  // markup survives.
  const std::string escaped = html_escape(R"(<script>alert("x") & 'y'</script>)");
  EXPECT_EQ(escaped, "&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;");
  for (char c : std::string("<>\"'")) EXPECT_EQ(escaped.find(c), std::string::npos) << c;
}

TEST(HtmlEscape, KeepsValidUtf8TabsAndNewlines) {
  EXPECT_EQ(html_escape("µs Δ% ± 😀\tx\ny"), "µs Δ% ± 😀\tx\ny");
}

TEST(HtmlEscape, ReplacesInvalidUtf8AndControlCharacters) {
  // A stray continuation byte, a truncated sequence, an overlong '/', a UTF-16 surrogate and
  // control characters each become U+FFFD; the text around them is kept.
  const std::string r(kReplacement);
  EXPECT_EQ(html_escape("a\x80z"), std::string("a") + r + "z");
  EXPECT_EQ(html_escape("a\xE2\x82"), std::string("a") + r + r);
  EXPECT_EQ(occurrences(html_escape("\xC0\xAF"), kReplacement), 2u);
  EXPECT_EQ(occurrences(html_escape("\xED\xA0\x80"), kReplacement), 3u);
  EXPECT_EQ(occurrences(html_escape("\xF4\x90\x80\x80"), kReplacement), 4u);  // above U+10FFFF
  EXPECT_EQ(html_escape(std::string("x\x01y\x7Fz\x1B", 6)),
            std::string("x") + r + "y" + r + "z" + r);
  EXPECT_EQ(html_escape(std::string("a\0b", 3)), std::string("a") + r + "b");
}

TEST(FormatNumbers, FixedDecimalsWithoutNegativeZero) {
  EXPECT_EQ(format_fixed(1234.5678, 2), "1234.57");
  EXPECT_EQ(format_fixed(-0.001, 2), "0.00");
  EXPECT_EQ(format_fixed(-1.25, 1), "-1.2");  // -1.25 is exact: round half to even
  EXPECT_EQ(format_fixed(7.0, 0), "7");
  EXPECT_EQ(format_fixed(std::nan(""), 2), "nan");
  EXPECT_EQ(format_fixed(-INFINITY, 2), "-inf");
}

TEST(FormatNumbers, CoordinatesDropTrailingZeros) {
  EXPECT_EQ(format_coord(12.5), "12.5");
  EXPECT_EQ(format_coord(3.0), "3");
  EXPECT_EQ(format_coord(1.239), "1.24");
  EXPECT_EQ(format_coord(-0.004), "0");
  EXPECT_EQ(format_coord(100.0), "100");
  EXPECT_EQ(format_coord(-20.10), "-20.1");
}

TEST(LinearScale, MapsTheDomainOntoTheRange) {
  // [0, 100] onto pixels [50, 450]: the ends map to the ends, a quarter to a quarter, and
  // values outside the domain extrapolate on the same line.
  const LinearScale x(0.0, 100.0, 50.0, 450.0);
  EXPECT_DOUBLE_EQ(x(0.0), 50.0);
  EXPECT_DOUBLE_EQ(x(100.0), 450.0);
  EXPECT_DOUBLE_EQ(x(25.0), 150.0);
  EXPECT_DOUBLE_EQ(x(200.0), 850.0);
  EXPECT_DOUBLE_EQ(x(-10.0), 10.0);
}

TEST(LinearScale, ReversedRangeForYAxes) {
  // A y axis grows upwards: the domain's minimum is at the bottom pixel.
  const LinearScale y(0.0, 1.0, 300.0, 100.0);
  EXPECT_DOUBLE_EQ(y(0.0), 300.0);
  EXPECT_DOUBLE_EQ(y(1.0), 100.0);
  EXPECT_DOUBLE_EQ(y(0.5), 200.0);
  EXPECT_GT(y(0.2), y(0.9));
}

TEST(LinearScale, OffsetDomainAndEmptyDomain) {
  const LinearScale x(60.0, 120.0, 0.0, 600.0);
  EXPECT_DOUBLE_EQ(x(60.0), 0.0);
  EXPECT_DOUBLE_EQ(x(75.0), 150.0);
  const LinearScale flat(5.0, 5.0, 10.0, 20.0);
  EXPECT_DOUBLE_EQ(flat(5.0), 10.0);
  EXPECT_DOUBLE_EQ(flat(7.0), 10.0);
}

TEST(NiceAxis, PercentAxis) {
  const NiceAxis axis = nice_axis(0.0, 100.0, 5);
  EXPECT_DOUBLE_EQ(axis.min, 0.0);
  EXPECT_DOUBLE_EQ(axis.max, 100.0);
  EXPECT_DOUBLE_EQ(axis.step, 20.0);
  EXPECT_EQ(axis.decimals, 0);
  EXPECT_EQ(axis.ticks, (std::vector<double>{0, 20, 40, 60, 80, 100}));
}

TEST(NiceAxis, RoundsOutwardToRoundSteps) {
  // Latencies from 63 to 107 us with about 4 ticks: a step of 20 from 60 to 120.
  const NiceAxis axis = nice_axis(63.0, 107.0, 4);
  EXPECT_DOUBLE_EQ(axis.step, 20.0);
  EXPECT_EQ(axis.ticks, (std::vector<double>{60, 80, 100, 120}));
}

TEST(NiceAxis, SmallStepsPrintExactly) {
  // A step of 0.01: two decimals, and each tick prints as the decimal it stands for.
  const NiceAxis axis = nice_axis(0.013, 0.047, 4);
  EXPECT_EQ(axis.decimals, 2);
  std::vector<std::string> labels;
  for (double tick : axis.ticks) labels.push_back(format_fixed(tick, axis.decimals));
  EXPECT_EQ(labels, (std::vector<std::string>{"0.01", "0.02", "0.03", "0.04", "0.05"}));
}

TEST(NiceAxis, CoversAnyIntervalWithEvenRoundTicks) {
  // For every interval: the axis covers it, its step is 1, 2 or 5 times a power of ten, the
  // ticks run from min to max by step, and there are not many more than asked for.
  const std::vector<std::pair<double, double>> intervals = {
      {0, 1},      {0, 7},     {-3.2, 9.9}, {89'000, 190'000}, {0.5, 0.99}, {1e-4, 3e-4},
      {-250, -10}, {12, 12.5}, {0, 1e9},    {999, 1001},       {-1, 1},     {42, 4242}};
  for (const auto& [low, high] : intervals) {
    SCOPED_TRACE(std::to_string(low) + ".." + std::to_string(high));
    const NiceAxis axis = nice_axis(low, high, 5);
    EXPECT_LE(axis.min, low);
    EXPECT_GE(axis.max, high);
    double mantissa = axis.step;
    while (mantissa >= 10.0) mantissa /= 10.0;
    while (mantissa < 1.0) mantissa *= 10.0;
    EXPECT_TRUE(std::fabs(mantissa - 1.0) < 1e-9 || std::fabs(mantissa - 2.0) < 1e-9 ||
                std::fabs(mantissa - 5.0) < 1e-9)
        << axis.step;
    ASSERT_GE(axis.ticks.size(), 2u);
    EXPECT_LE(axis.ticks.size(), 12u);
    EXPECT_DOUBLE_EQ(axis.ticks.front(), axis.min);
    EXPECT_DOUBLE_EQ(axis.ticks.back(), axis.max);
    for (std::size_t i = 1; i < axis.ticks.size(); ++i) {
      EXPECT_NEAR(axis.ticks[i] - axis.ticks[i - 1], axis.step, axis.step * 1e-9);
    }
  }
}

TEST(NiceAxis, EmptyAndBackwardIntervals) {
  // [0, 0] becomes [0, 1]; [5, 5] gets room on both sides; a backward interval is swapped.
  const NiceAxis zero = nice_axis(0.0, 0.0, 4);
  EXPECT_DOUBLE_EQ(zero.min, 0.0);
  EXPECT_DOUBLE_EQ(zero.max, 1.0);
  const NiceAxis five = nice_axis(5.0, 5.0, 4);
  EXPECT_LT(five.min, 5.0);
  EXPECT_GT(five.max, 5.0);
  const NiceAxis backward = nice_axis(10.0, 0.0, 5);
  const NiceAxis forward = nice_axis(0.0, 10.0, 5);
  EXPECT_EQ(backward.ticks, forward.ticks);
}

TEST(SvgWriter, WritesATitledScalableImage) {
  SvgWriter svg("chart-x", 960, 200, "Tier <shares>", "desc & more");
  svg.rect(10, 20, 30.5, 40, "bar fill-0", "fifo: 50%");
  svg.text(5, 6, "a < b", "axis-label", Anchor::kMiddle, -90);
  const std::string out = svg.finish();
  EXPECT_EQ(out.rfind(R"(<svg id="chart-x" class="chart" viewBox="0 0 960 200")", 0), 0u) << out;
  EXPECT_NE(out.find(R"(role="img")"), std::string::npos);
  EXPECT_NE(out.find("<title id=\"chart-x-title\">Tier &lt;shares&gt;</title>"), std::string::npos);
  EXPECT_NE(out.find("<desc id=\"chart-x-desc\">desc &amp; more</desc>"), std::string::npos);
  EXPECT_NE(out.find(R"(<rect x="10" y="20" width="30.5" height="40" class="bar fill-0">)"
                     "<title>fifo: 50%</title></rect>"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(R"x(text-anchor="middle" transform="rotate(-90 5 6)">a &lt; b</text>)x"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.substr(out.size() - 7), "</svg>\n");
}

TEST(SvgWriter, NegativeSizesAreClampedAndShortPolylinesOmitted) {
  SvgWriter svg("s", 10, 10, "t", "d");
  svg.rect(0, 0, -5, 3, "bar");
  svg.polyline({{1, 2}}, "cdf");
  svg.polyline({{1, 2}, {3.333, 4}}, "cdf");
  const std::string out = svg.finish();
  EXPECT_NE(out.find(R"(width="0" height="3")"), std::string::npos) << out;
  EXPECT_EQ(occurrences(out, "<polyline"), 1u);
  EXPECT_NE(out.find(R"(points="1,2 3.33,4")"), std::string::npos) << out;
}

}  // namespace
}  // namespace bindersim::io
