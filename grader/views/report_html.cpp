#include "views/report_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/files.h"
#include "views/class_view.h"
#include "views/report.h"
#include "views/text.h"

namespace cudalab {

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
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
      default:
        out += c;
    }
  }
  return out;
}

std::string inline_code_html(const std::string& text) {
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t open = text.find('`', at);
    if (open == std::string::npos) break;
    // A span ends at the next backtick of its line; an empty one ("``") is
    // no span: both stay as they are.
    const std::size_t close = text.find_first_of("`\n", open + 1);
    if (close == std::string::npos || text[close] == '\n' || close == open + 1) {
      const std::size_t end = close != std::string::npos && text[close] == '`' ? close + 1 : open + 1;
      out += html_escape(text.substr(at, end - at));
      at = end;
      continue;
    }
    out += html_escape(text.substr(at, open - at)) + "<code>" +
           html_escape(text.substr(open + 1, close - open - 1)) + "</code>";
    at = close + 1;
  }
  return out + html_escape(text.substr(std::min(at, text.size())));
}

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

const char* kColors[] = {"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

// "1e+03" -> "1000"; "0.1"; "1e+05" -> "100k".
std::string tick_label(double v) {
  if (v >= 1e6) return fmt::format("{:g}M", v / 1e6);
  if (v >= 1e4) return fmt::format("{:g}k", v / 1e3);
  return fmt::format("{:g}", v);
}

// A share of a peak: "7%", "0.4%"; never "0%" for a kernel that ran (a
// slow one reads its share, not nothing).
std::string percent(double p) {
  if (p >= 1) return fmt::format("{:.0f}%", p);
  if (p >= 0.1) return fmt::format("{:.1f}%", p);
  return "under 0.1%";
}

struct Frame {
  double left = 70, right = 20, top = 28, bottom = 46, width = 620, height = 340;
  double plot_w() const { return width - left - right; }
  double plot_h() const { return height - top - bottom; }
};

// How wide `text` draws at `size` px in a sans-serif font, a little generously
// (digits and capitals are wider than the average letter): what the charts
// lay their labels out by, since an SVG cannot measure its own text.
double text_width(const std::string& text, double size) {
  return 0.62 * size * static_cast<double>(text.size());
}

// `text` in lines of at most `chars` characters, broken at spaces; a word
// longer than a line stays whole. Labels wrap, never get cut.
std::vector<std::string> wrap_words(const std::string& text, std::size_t chars) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    if (!line.empty() && line.size() + 1 + word.size() > chars) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    at = end + 1;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

// An SVG <text> of `lines`, one under the other from `y` (the first line's
// baseline), `dy` apart.
std::string svg_lines(const std::vector<std::string>& lines, double x, double y, double dy,
                      const std::string& attributes) {
  std::string out = fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" {}>", x, y, attributes);
  for (std::size_t i = 0; i < lines.size(); ++i)
    out +=
        fmt::format("<tspan x=\"{:.1f}\" dy=\"{}\">{}</tspan>", x, i == 0 ? 0.0 : dy, html_escape(lines[i]));
  return out + "</text>\n";
}

// The chart's frame and its title, wrapped to the chart's width; a long title
// moves the plot down rather than run off the edge.
std::string svg_open(Frame& f, const std::string& title) {
  const auto lines =
      wrap_words(title, static_cast<std::size_t>(std::max(10.0, (f.width - 16) / (0.62 * 13))));
  const double extra = 16.0 * static_cast<double>(lines.size() - 1);
  f.top += extra, f.height += extra;
  return fmt::format(
             "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{0}\" height=\"{1}\" "
             "viewBox=\"0 0 {0} {1}\" role=\"img\" aria-label=\"{2}\">\n<title>{2}</title>\n<rect x=\"0\" "
             "y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"#fff\"/>\n",
             f.width, f.height, html_escape(title)) +
         svg_lines(lines, 8, 18, 16, "font-size=\"13\" font-weight=\"bold\"");
}

}  // namespace

namespace {

// One call's work over a kernel's median time.
double gflops_of(const SpeedChart& c, const ChartPoint& p) {
  return c.flops / (p.ms * 1e6);
}
double gbs_of(const SpeedChart& c, const ChartPoint& p) {
  return c.bytes / (p.ms * 1e6);
}

const char* color_of(std::size_t point) {
  return kColors[std::min<std::size_t>(point, 6)];
}

// What a chart draws inside its frame, and what its caption lists under it.
struct ChartParts {
  std::string svg, legend, caption;
};

// The bars' labels, wrapped; they stand left of the bars: the frame leaves
// room for the longest (up to 30 characters a line, then it wraps), so none
// is cut.
std::vector<std::vector<std::string>> bar_labels(const SpeedChart& c, Frame& f) {
  constexpr double kLabelSize = 11;
  constexpr std::size_t kLabelChars = 30;
  std::vector<std::vector<std::string>> labels;
  double widest = 0;
  for (const auto& p : c.points) {
    labels.push_back(wrap_words(p.label, kLabelChars));
    for (const auto& l : labels.back()) widest = std::max(widest, text_width(l, kLabelSize));
  }
  f.left = std::max(f.left, widest + 14);
  return labels;
}

// The roofline's x-axis title says what its x is, wrapped under the plot;
// the frame grows down by its extra lines.
std::vector<std::string> roofline_x_title(const SpeedChart& c, Frame& f) {
  const std::string at = c.traffic_m > 0 ? fmt::format(" at {}x{}x{}", c.traffic_m, c.traffic_n, c.traffic_k)
                                         : fmt::format(" at a call of {:g} MFLOP", c.traffic_flops / 1e6);
  std::vector<std::string> x_title = wrap_words(
      c.traffic_measured()
          ? "FLOP per byte of global-memory traffic (32-byte sectors each kernel requested, counted in "
            "CPU mode" +
                at + ")"
          : "FLOP per byte of compulsory DRAM traffic (the lab's nominal intensity, the same for every "
            "kernel)",
      static_cast<std::size_t>(f.plot_w() / text_width("x", 12)));
  const double extra = 15.0 * static_cast<double>(x_title.size() - 1);
  f.bottom += extra, f.height += extra;
  return x_title;
}

// Roofline: log-log, FLOP per byte against GFLOP/s at the timed shape,
// whole decades around the kernels and the ridge (where the DRAM slope
// meets the FP32 roof).
struct Roofline {
  Frame f;
  double x0 = 0, y0 = 0;  // the plot's bottom left
  double nominal = 0, ridge = 0;
  double xmin = 0, xmax = 0, ymin = 0, ymax = 0;
  double X(double v) const { return x0 + f.plot_w() * std::log10(v / xmin) / std::log10(xmax / xmin); }
  double Y(double v) const { return y0 - f.plot_h() * std::log10(v / ymin) / std::log10(ymax / ymin); }
};

Roofline roofline_scale(const SpeedChart& c, const Frame& f) {
  Roofline r;
  r.f = f;
  r.x0 = f.left, r.y0 = f.top + f.plot_h();
  r.nominal = c.flops / c.bytes;
  r.ridge = c.peak_dram_gbs > 0 && c.peak_fp32_gflops > 0 ? c.peak_fp32_gflops / c.peak_dram_gbs : r.nominal;
  double lo = r.ridge, hi = r.ridge;
  for (const auto& p : c.points) lo = std::min(lo, c.intensity(p)), hi = std::max(hi, c.intensity(p));
  r.xmin = std::pow(10, std::floor(std::log10(lo / 4)));
  r.xmax = std::pow(10, std::ceil(std::log10(hi * 4)));
  double rmin = 1e300, rmax = 0;
  for (const auto& p : c.points) {
    const double g = gflops_of(c, p);
    rmin = std::min(rmin, g), rmax = std::max(rmax, g);
  }
  if (c.peak_fp32_gflops > 0) rmax = std::max(rmax, c.peak_fp32_gflops);
  if (c.peak_dram_gbs > 0) rmin = std::min(rmin, r.xmin * c.peak_dram_gbs);
  r.ymin = std::pow(10, std::floor(std::log10(rmin / 2)));
  r.ymax = std::pow(10, std::ceil(std::log10(rmax * 1.5)));
  return r;
}

// A decade's grid line and tick on each axis, and the axes' titles.
std::string roofline_axes(const Roofline& r, const std::vector<std::string>& x_title) {
  const Frame& f = r.f;
  std::string svg;
  for (double t = r.xmin; t <= r.xmax * 1.0001; t *= 10)
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/><text x=\"{0:.1f}\" "
        "y=\"{3}\" font-size=\"11\" text-anchor=\"middle\">{4}</text>\n",
        r.X(t), f.top, r.y0, r.y0 + 16, tick_label(t));
  for (double t = r.ymin; t <= r.ymax * 1.0001; t *= 10)
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#eee\"/><text x=\"{3}\" "
        "y=\"{4:.1f}\" "
        "font-size=\"11\" text-anchor=\"end\">{5}</text>\n",
        r.x0, r.Y(t), r.x0 + f.plot_w(), r.x0 - 6, r.Y(t) + 4, tick_label(t));
  svg += svg_lines(x_title, r.x0 + f.plot_w() / 2, r.y0 + 32, 15,
                   "class=\"axis x\" font-size=\"12\" text-anchor=\"middle\"");
  svg += fmt::format(
      "<text class=\"axis y\" x=\"14\" y=\"{0}\" font-size=\"12\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 14 {0})\">GFLOP/s (timed on the GPU)</text>\n",
      f.top + f.plot_h() / 2);
  return svg;
}

// The DRAM slope and the FP32 roof where both peaks are known, each
// labelled; where the traffic was not counted, the dashed line of the lab's
// nominal intensity every kernel stands on.
std::string roofline_ceilings(const SpeedChart& c, const Roofline& r) {
  std::string svg;
  if (c.peak_dram_gbs > 0 && c.peak_fp32_gflops > 0) {
    svg += fmt::format(
        "<polyline class=\"roof\" fill=\"none\" stroke=\"#333\" stroke-width=\"2\" points=\"{:.1f},{:.1f} "
        "{:.1f},{:.1f} {:.1f},{:.1f}\"/>\n",
        r.X(r.xmin), r.Y(r.xmin * c.peak_dram_gbs), r.X(r.ridge), r.Y(c.peak_fp32_gflops), r.X(r.xmax),
        r.Y(c.peak_fp32_gflops));
    // The slope's label under its start: the slope rises away from it.
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#333\">DRAM {:.0f} GB/s</text>\n<text "
        "x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#333\" text-anchor=\"end\">FP32 peak {:.0f} "
        "GFLOP/s</text>\n",
        r.X(r.xmin) + 6, std::min(r.Y(r.xmin * c.peak_dram_gbs) + 14, r.y0 - 4), c.peak_dram_gbs,
        r.X(r.xmax) - 4, r.Y(c.peak_fp32_gflops) - 6, c.peak_fp32_gflops);
  }
  if (!c.traffic_measured())
    svg += fmt::format(
        "<line class=\"nominal\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#999\" "
        "stroke-dasharray=\"3,3\"/>\n",
        r.X(r.nominal), r.f.top, r.y0);
  return svg;
}

// " at 3.76 FLOP/B" where each kernel stands at its own counted traffic.
std::string where_of(const SpeedChart& c, const ChartPoint& p) {
  return c.traffic_measured() ? fmt::format(" at {:.2f} FLOP/B", c.intensity(p)) : "";
}

// Each kernel at its intensity and GFLOP/s. Kernels of the same traffic
// stand on one x, and one as fast as another lands on it: the student's is
// a ring drawn last, around the dot it may cover, so both stay visible.
std::string roofline_points(const SpeedChart& c, const Roofline& r) {
  std::string marks;
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    const auto& p = c.points[i];
    const double g = gflops_of(c, p);
    const char* color = color_of(i);
    const std::string paint =
        p.student ? fmt::format("r=\"8\" fill=\"none\" stroke=\"{}\" stroke-width=\"3\"", color)
                  : fmt::format("r=\"5\" fill=\"{}\" stroke=\"#000\" stroke-width=\"0.5\"", color);
    marks = fmt::format(
                "<circle class=\"point{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" {}><title>{}: {:.0f} "
                "GFLOP/s{}</title></circle>\n",
                p.student ? " student" : "", r.X(c.intensity(p)), r.Y(g), paint, html_escape(p.label), g,
                where_of(c, p)) +
            marks;
  }
  return marks;
}

// The roofline's legend: each kernel's GFLOP/s, where it stands, its time
// and its share of the FP32 peak; the student's dot a ring, as on the chart.
std::string roofline_legend(const SpeedChart& c) {
  std::string legend;
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    const auto& p = c.points[i];
    const double g = gflops_of(c, p);
    const char* color = color_of(i);
    std::string share;
    if (c.peak_fp32_gflops > 0) share = ", " + percent(100 * g / c.peak_fp32_gflops) + " of the FP32 peak";
    const std::string dot = p.student ? fmt::format("border:3px solid {};width:6px;height:6px", color)
                                      : fmt::format("background:{}", color);
    legend +=
        fmt::format("<li><span class=\"dot\" style=\"{}\"></span>{}: {:.0f} GFLOP/s{} ({:.3f} ms{})</li>",
                    dot, html_escape(p.label), g, where_of(c, p), p.ms, share);
  }
  return legend;
}

// Why the kernels stand where they do, where a reader could wonder: all on
// the nominal line (the traffic not counted), or one above the DRAM slope.
std::string roofline_caption(const SpeedChart& c) {
  if (!c.traffic_measured())
    return (c.traffic_note.empty()
                ? std::string(kTrafficNotMeasured) + "this grade holds no count of each kernel's traffic"
                : c.traffic_note) +
           "; every kernel stands at the lab's nominal intensity, the dashed line.";
  bool above_dram = false;
  for (const auto& p : c.points)
    above_dram = above_dram || (c.peak_dram_gbs > 0 && gflops_of(c, p) > c.intensity(p) * c.peak_dram_gbs);
  if (above_dram)
    return "A kernel above the DRAM slope got part of the traffic it requested from the caches (L1, L2): the "
           "sectors counted are those it asked for, not those DRAM delivered.";
  return {};
}

// Each kernel stands at the traffic it requested where that was counted
// (traffic.h): a tiled kernel, which reads each element from global memory
// once per tile instead of once per use, stands right of a naive one. Where
// it was not, every kernel stands at the lab's nominal intensity, one dashed
// line, and the caption says why.
ChartParts roofline_parts(const SpeedChart& c, const Frame& f, const std::vector<std::string>& x_title) {
  const Roofline r = roofline_scale(c, f);
  return {roofline_axes(r, x_title) + roofline_ceilings(c, r) + roofline_points(c, r), roofline_legend(c),
          roofline_caption(c)};
}

// Bandwidth: achieved GB/s from 0, a little past the fastest kernel or the
// DRAM peak.
struct Bandwidth {
  Frame f;
  double x0 = 0, y0 = 0;  // the plot's bottom left
  double vmax = 0;
  double bar_h = 0;  // a bar's height; 6 between bars
  double X(double v) const { return x0 + f.plot_w() * v / vmax; }
  double bar_y(std::size_t i) const { return f.top + 6 + i * (bar_h + 6); }
};

Bandwidth bandwidth_scale(const SpeedChart& c, const Frame& f) {
  Bandwidth b;
  b.f = f;
  b.x0 = f.left, b.y0 = f.top + f.plot_h();
  b.vmax = c.peak_dram_gbs;
  for (const auto& p : c.points) b.vmax = std::max(b.vmax, gbs_of(c, p));
  b.vmax *= 1.08;
  b.bar_h = std::min(28.0, f.plot_h() / static_cast<double>(c.points.size()) - 6);
  return b;
}

// A grid line and tick a round step apart, and the axis's title.
std::string bandwidth_axes(const Bandwidth& b) {
  std::string svg;
  const double step = std::pow(10, std::floor(std::log10(b.vmax / 2)));
  for (double t = 0; t <= b.vmax; t += step)
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/><text x=\"{0:.1f}\" "
        "y=\"{3}\" font-size=\"11\" text-anchor=\"middle\">{4}</text>\n",
        b.X(t), b.f.top, b.y0, b.y0 + 16, tick_label(t));
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">GB/s of DRAM traffic</text>\n",
      b.x0 + b.f.plot_w() / 2, b.f.height - 8);
  return svg;
}

// A bar per kernel, the student's first, each with its label left of it.
std::string bandwidth_bars(const SpeedChart& c, const Bandwidth& b,
                           const std::vector<std::vector<std::string>>& labels) {
  std::string svg;
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    const auto& p = c.points[i];
    const double v = gbs_of(c, p);
    const double y = b.bar_y(i);
    const double lines = static_cast<double>(labels[i].size());
    svg += fmt::format(
               "<rect class=\"bar{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
               "fill=\"{}\"><title>{}: {:.0f} GB/s</title></rect>\n",
               p.student ? " student" : "", b.X(0), y, b.X(v) - b.X(0), b.bar_h, color_of(i),
               html_escape(p.label), v) +
           svg_lines(labels[i], b.X(0) - 6, y + b.bar_h / 2 + 4 - (lines - 1) * 6, 12,
                     "class=\"label\" font-size=\"11\" text-anchor=\"end\"");
  }
  return svg;
}

// The DRAM peak as a dashed line across the bars, labelled.
std::string bandwidth_ceiling(const SpeedChart& c, const Bandwidth& b) {
  if (!(c.peak_dram_gbs > 0)) return {};
  return fmt::format(
      "<line class=\"roof\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#333\" "
      "stroke-width=\"2\" stroke-dasharray=\"6,3\"/><text x=\"{3:.1f}\" y=\"{4}\" font-size=\"11\" "
      "text-anchor=\"end\">DRAM peak {5:.0f} GB/s</text>\n",
      b.X(c.peak_dram_gbs), b.f.top, b.y0, b.X(c.peak_dram_gbs) - 4, b.y0 - 6, c.peak_dram_gbs);
}

// The bandwidth chart's legend: each kernel's GB/s, its time and its share
// of the DRAM peak.
std::string bandwidth_legend(const SpeedChart& c) {
  std::string legend;
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    const auto& p = c.points[i];
    const double v = gbs_of(c, p);
    std::string share;
    if (c.peak_dram_gbs > 0) share = ", " + percent(100 * v / c.peak_dram_gbs) + " of the DRAM peak";
    legend += fmt::format(
        "<li><span class=\"dot\" style=\"background:{}\"></span>{}: {:.0f} GB/s ({:.3f} ms{})</li>",
        color_of(i), html_escape(p.label), v, p.ms, share);
  }
  return legend;
}

// Only data moved, or too little work per byte for the FP32 roof to matter
// (a transpose, a vector add): achieved GB/s as bars against the DRAM peak,
// a line.
ChartParts bandwidth_parts(const SpeedChart& c, const Frame& f,
                           const std::vector<std::vector<std::string>>& labels) {
  const Bandwidth b = bandwidth_scale(c, f);
  return {bandwidth_axes(b) + bandwidth_bars(c, b, labels) + bandwidth_ceiling(c, b), bandwidth_legend(c),
          ""};
}

}  // namespace

std::string speed_chart_svg(const SpeedChart& c, const std::string& title) {
  if (c.points.empty() || !(c.bytes > 0)) return {};
  Frame f;
  // The labels and the axis title first: the frame makes room for them.
  const bool bars = c.memory_bound();
  const std::vector<std::vector<std::string>> labels =
      bars ? bar_labels(c, f) : std::vector<std::vector<std::string>>{};
  const std::vector<std::string> x_title = bars ? std::vector<std::string>{} : roofline_x_title(c, f);
  std::string svg = svg_open(f, title);
  const ChartParts parts = bars ? bandwidth_parts(c, f, labels) : roofline_parts(c, f, x_title);
  svg += parts.svg +
         fmt::format(
             "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>\n</svg>\n",
             f.left, f.top, f.plot_w(), f.plot_h());
  return "<figure>" + svg + "<figcaption><ul class=\"legend\">" + parts.legend + "</ul>" +
         (parts.caption.empty() ? "" : "<p class=\"note traffic\">" + html_escape(parts.caption) + "</p>") +
         "</figcaption></figure>\n";
}

namespace {

// A label of the gauge: its text centred on x where it fits, moved in from
// the edges, on the first of its rows where it overlaps no other label.
struct GaugeLabel {
  std::string text;
  double x = 0;
  std::string cls;
};

std::string place_labels(const std::vector<GaugeLabel>& labels, const std::vector<double>& rows,
                         double width) {
  std::string out;
  std::vector<std::vector<std::pair<double, double>>> taken(rows.size());
  for (const auto& l : labels) {
    const double w = text_width(l.text, 11);
    const double left = std::clamp(l.x - w / 2, 2.0, std::max(2.0, width - 2 - w));
    std::size_t row = 0;
    for (; row + 1 < rows.size(); ++row) {
      bool free = true;
      for (const auto& [a, b] : taken[row]) free = free && (left + w + 6 < a || left > b + 6);
      if (free) break;
    }
    taken[row].push_back({left, left + w});
    out += fmt::format("<text class=\"{}\" x=\"{:.1f}\" y=\"{}\" font-size=\"11\">{}</text>\n", l.cls, left,
                       rows[row], html_escape(l.text));
  }
  return out;
}

std::string ratio_text(double r) {
  return fmt::format("{:.2f}x", r);
}

}  // namespace

std::string speed_gauge_svg(const std::string& check_id, const CheckScore& score) {
  if (!score.speed || !score.speed->pass_at || !(score.speed->ratio >= 0)) return {};
  const SpeedOutcome& s = *score.speed;
  const double ratio = s.ratio;
  const double pass = *s.pass_at;
  const double full = s.credit ? s.credit->full_at : pass;
  const double zero = s.credit ? s.credit->zero_at : pass;
  const double vmax = std::max({ratio, pass, full}) * 1.2;
  constexpr double kWidth = 620, kPad = 12, kBarTop = 38, kBarH = 12;
  const auto X = [&](double v) { return kPad + (kWidth - 2 * kPad) * std::clamp(v, 0.0, vmax) / vmax; };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"gauge\" width=\"{0}\" height=\"84\" viewBox=\"0 0 "
      "{0} "
      "84\" role=\"img\" aria-label=\"{1}: your ratio {2} against the pass line {3}\">\n"
      "<title>{1}: your ratio {2}; pass at {3}, full credit at {4}</title>\n",
      kWidth, html_escape(check_id), ratio_text(ratio), ratio_text(pass), ratio_text(full));
  // The zones: no credit, partial credit, full credit.
  const auto zone = [&](double a, double b, const char* cls, const char* color) {
    if (b > a)
      svg += fmt::format(
          "<rect class=\"{}\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>\n", cls,
          X(a), kBarTop, X(b) - X(a), kBarH, color);
  };
  zone(0, zero, "zone none", "#f2c4c4");
  zone(zero, full, "zone partial", "#f8e2a8");
  zone(full, vmax, "zone full", "#c8e6c8");
  std::vector<GaugeLabel> above;
  const auto mark = [&](double v, const char* cls, const char* dash) {
    svg += fmt::format(
        "<line class=\"{}\" x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#333\" "
        "stroke-width=\"2\"{}/>\n",
        cls, X(v), kBarTop - 8, X(v), kBarTop + kBarH + 4, dash);
  };
  if (std::abs(full - pass) < 1e-9) {
    mark(pass, "threshold pass full", "");
    above.push_back({"pass and full credit: " + ratio_text(pass), X(pass), "threshold-label"});
  } else {
    mark(pass, "threshold pass", "");
    mark(full, "threshold full", " stroke-dasharray=\"4,2\"");
    above.push_back({"pass: " + ratio_text(pass), X(pass), "threshold-label"});
    above.push_back({"full credit: " + ratio_text(full), X(full), "threshold-label"});
  }
  svg += place_labels(above, {14, 27}, kWidth);
  svg += fmt::format(
      "<circle class=\"point student\" cx=\"{:.1f}\" cy=\"{}\" r=\"7\" fill=\"#d62728\" stroke=\"#000\" "
      "stroke-width=\"1\"/>\n",
      X(ratio), kBarTop + kBarH / 2);
  svg += place_labels({{"you: " + ratio_text(ratio), X(ratio), "student-label"}}, {kBarTop + kBarH + 22},
                      kWidth);
  svg += fmt::format("<text x=\"{}\" y=\"80\" font-size=\"10\" fill=\"#555\">0x</text>\n", kPad);
  svg += "</svg>\n";
  const std::string caption = s.credit
                                  ? fmt::format(
                                        "Your kernel's speed ratio is {}. No points at or below {}, partial "
                                        "credit between {} and {}, "
                                        "full credit from {}; the check passes from {}.",
                                        ratio_text(ratio), ratio_text(zero), ratio_text(zero),
                                        ratio_text(full), ratio_text(full), ratio_text(pass))
                                  : fmt::format("Your kernel's speed ratio is {}; the check passes from {}.",
                                                ratio_text(ratio), ratio_text(pass));
  return "<figure class=\"gauge\">" + svg + "<figcaption class=\"note\">" + html_escape(caption) +
         "</figcaption></figure>\n";
}

namespace {

const char* kStyle =
    "body{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#222}"
    "h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}"
    "table{border-collapse:collapse;width:100%}td,th{padding:4px 8px;border-bottom:1px solid "
    "#eee;text-align:left}td.num{white-space:nowrap}"
    ".pass{color:#fff;background:#2a7d2a}.fail,.timeout,.crash,.error{color:#fff;background:#b22}"
    ".not_run,.skipped{color:#fff;background:#888}.badge{padding:1px 6px;border-radius:3px;font-size:.85em}"
    "pre{background:#f6f6f6;padding:8px;white-space:pre-wrap;font-size:.85em}.note{color:#555}.who{white-"
    "space:pre-line}"
    ".legend{list-style:none;padding:0;font-size:.9em}.dot{display:inline-block;width:10px;height:10px;"
    "border-radius:5px;margin-right:6px}figure{margin:1em 0}"
    // A failing check's diagnosis: the first thing read, in the page's font.
    ".diagnosis{border-left:5px solid #b22;background:#fdecea;padding:10px 14px;margin:.6em "
    "0;font-size:1.05em;"
    "line-height:1.4}section.check{margin:1.2em 0}section.check h3{margin:.3em 0;font-size:1.05em}"
    "section.passed h3{font-weight:normal;font-size:.95em}.pts{color:#555;font-weight:normal;font-size:.9em}"
    "details{margin:.2em 0 .2em 1em}summary{cursor:pointer;color:#555;font-size:.9em}"
    "figure.gauge{margin:.4em 0}figure.gauge figcaption{font-size:.9em}"
    "table.class{table-layout:fixed;width:100%}table.class td{overflow-wrap:anywhere}"
    ".who{font-size:.85em;color:#555;margin-left:88px}.wide{overflow-x:auto;max-width:100%}"
    "th.share,td.share{width:45%}.sharebar{display:inline-block;height:10px;background:#e07b39;"
    "vertical-align:middle;margin-right:6px}.status-graded{color:#2a7d2a}.status-bad{color:#b22}"
    ".axis{fill:#333}";

std::string page(const std::string& title, const std::string& body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
      "charset=\"utf-8\">\n<title>{}</title>\n<style>{}</style>\n"
      "</head>\n<body>\n{}</body>\n</html>\n",
      html_escape(title), kStyle, body);
}

}  // namespace

namespace {

// A check's messages as the page shows them, a line at a time: its words
// with their code spans (inline_code_html), a line quoted from the test's
// output ("| ") as the test wrote it.
std::string messages_html(const std::vector<std::string>& messages) {
  std::string out;
  for (const auto& m : messages) {
    std::size_t at = 0;
    while (at <= m.size()) {
      std::size_t eol = m.find('\n', at);
      if (eol == std::string::npos) eol = m.size();
      const std::string line = m.substr(at, eol - at);
      const std::size_t start = std::min(line.find_first_not_of(' '), line.size());
      out += (line.compare(start, 2, "| ") == 0 ? html_escape(line) : inline_code_html(line)) + "\n";
      at = eol + 1;
    }
  }
  return out;
}

// One check's section of report.html. A check that did not pass opens with
// its diagnosis in a block of its own, in the page's font, before any
// number: what a student should read first. Then a speed check's gauge and
// chart, then the rest of its messages (measurements, the other failures,
// notes). A check that passed is one line, its messages and chart folded.
std::string check_section(const std::string& lab_id, const GradedCheck& check, const std::string& anchor) {
  const CheckSpec& spec = check.spec;
  const CheckResult& r = check.result;
  const bool passed = r.verdict == Verdict::pass;
  Style style;
  style.verbose = true;
  std::vector<std::string> messages = check_messages(style, spec, r, check.score);
  std::string out = fmt::format(
      "<section class=\"check {6}\" id=\"{1}\">\n<h3><span class=\"badge {0}\">{0}</span> {2}: {3} <span "
      "class=\"pts\">{4:.2f} / {5:g}</span></h3>\n",
      spelling(r.verdict), anchor, html_escape(spec.id), html_escape(spec.name), check.score.points,
      check.score.max_points, passed ? "passed" : "failed");
  const std::string chart = spec.kind == CheckKind::speed
                                ? speed_chart_svg(speed_chart(r), fmt::format("{}: {}", lab_id, spec.id))
                                : "";
  const std::string gauge = speed_gauge_svg(spec.id, check.score);
  if (passed) {
    const std::string rest = messages_html(messages);
    out += gauge;
    if (!rest.empty() || !chart.empty())
      out += "<details><summary>details</summary>\n" +
             (rest.empty() ? std::string() : "<pre>" + rest + "</pre>\n") + chart + "</details>\n";
    return out + "</section>\n";
  }
  const std::string diagnosis = check_diagnosis(check);
  if (!diagnosis.empty() && !messages.empty()) {
    // The diagnosis is the first line of the first message: the rest of
    // that message stays with the others, below.
    const std::size_t eol = messages.front().find('\n');
    if (eol == std::string::npos)
      messages.erase(messages.begin());
    else
      messages.front().erase(0, eol + 1);
    out += "<div class=\"diagnosis\">" + inline_code_html(diagnosis) + "</div>\n";
  }
  out += gauge + chart;
  const std::string rest = messages_html(messages);
  if (!rest.empty()) out += "<pre class=\"evidence\">" + rest + "</pre>\n";
  return out + "</section>\n";
}

}  // namespace

std::string report_html(const GradeDocument& g) {
  std::string body = fmt::format("<h1>cudalab: {} &mdash; {:.2f} / {:g} points</h1>\n", html_escape(g.id),
                                 g.score, g.max_score);
  body += fmt::format("<p class=\"note\">{}</p>\n",
                      html_escape(g.gpu        ? "GPU: " + g.gpu_line
                                  : g.cpu_mode ? "CPU mode, no GPU (" + g.gpu_line +
                                                     "): correctness only, speed checks not run" +
                                                     (g.provisional ? "; a provisional grade" : "")
                                               : "no GPU (" + g.gpu_line + "): checks not run"));
  // Who handed it in, when, and any late penalty: the same lines as report.txt's.
  const std::string header = submission_header(g);
  if (!header.empty()) body += "<p class=\"who\">" + html_escape(header) + "</p>\n";
  if (!g.error.empty()) body += "<pre>" + html_escape(g.error) + "</pre>\n";
  for (const auto& n : g.notes) body += "<p class=\"note\">" + html_escape(n) + "</p>\n";
  for (const auto& lab : g.labs) {
    body += fmt::format("<h2>{}: {} &mdash; {:.2f} / {:g}{}</h2>\n", html_escape(lab.id),
                        html_escape(lab.title), lab.points, lab.max_points,
                        lab.weight != 1 ? fmt::format(" (weight {:g})", lab.weight) : "");
    if (lab.status != LabStatus::graded) {
      body += fmt::format("<p><span class=\"badge {0}\">{0}</span></p>\n<pre>{1}</pre>\n",
                          spelling(lab.status), html_escape(lab.message));
      continue;
    }
    body += "<table>\n<tr><th></th><th>check</th><th>points</th><th>time</th></tr>\n";
    std::string details;
    for (const GradedCheck& check : lab.checks) {
      const CheckSpec& spec = check.spec;
      const CheckResult& r = check.result;
      const CheckScore& s = check.score;
      const std::string anchor = html_escape(lab.id + "-" + spec.id);
      body += fmt::format(
          "<tr><td><span class=\"badge {0}\">{0}</span></td><td><a href=\"#{1}\">{2}</a>: "
          "{3}</td><td class=\"num\">{4:.2f} / "
          "{5:g}</td><td class=\"num\">{6:.1f} s</td></tr>\n",
          spelling(r.verdict), anchor, html_escape(spec.id), html_escape(spec.name), s.points, s.max_points,
          r.seconds);
      details += check_section(lab.id, check, anchor);
    }
    body += "</table>\n" + details;
  }
  if (!g.ignored.empty()) {
    body += "<h2>Files not taken</h2>\n<ul>\n";
    for (const auto& i : g.ignored) body += "<li>" + html_escape(i) + "</li>\n";
    body += "</ul>\n";
  }
  return page("cudalab: " + g.id, body);
}

namespace {

// The class view as tables, a lab at a time: each check that someone failed
// or could not run, how many of the class, and the three diagnoses most of
// them failed with, each with its share of the class.
std::string class_tables(const ClassView& v) {
  std::string out =
      "<h2>Where the class lost points</h2>\n<p class=\"note\">Per check: the submissions that "
      "failed it, and the causes they failed with, the three most common first, with who they are: the "
      "cause each diagnosis named, whatever its shapes and numbers, each with its share of the submissions "
      "the check ran for, and one of them as its student read it. class.csv has the same.</p>\n";
  std::string lab;
  bool open = false;
  for (const ClassCheck& c : v.checks) {
    if (c.lab != lab) {
      if (open) out += "</table>\n";
      lab = c.lab;
      out += "<h3>" + html_escape(lab) +
             "</h3>\n<table class=\"class\">\n<tr><th>check</th><th>failed</th><th>not run</th><th "
             "class=\"share\">most common causes</th></tr>\n";
      open = true;
    }
    if (c.kind == "lab" && c.failed == 0) continue;  // every submission's lab was graded
    const double of = std::max(1, c.of);
    // Every cause, the three most common open, the others folded; each
    // with the submissions behind it, linked to their pages.
    const auto cause = [&](const DiagnosisCount& d) {
      const double share = d.count / of;
      // The first names shown, the rest folded: a cause most of a class of
      // 200 shares (a missing file) would otherwise list them all, a page long.
      constexpr std::size_t kNamesShown = 12;
      std::vector<std::string> links, folded;
      for (const auto& id : d.who)
        (links.size() < kNamesShown ? links : folded)
            .push_back(fmt::format("<a href=\"{0}/report.html\">{0}</a>", html_escape(id)));
      std::string who = fmt::format("{}", fmt::join(links, ", "));
      if (!folded.empty())
        who += fmt::format(", <details class=\"more\"><summary>and {} more</summary>{}</details>",
                           folded.size(), fmt::join(folded, ", "));
      // The cause in bold, one submission's whole diagnosis under it, folded.
      return fmt::format(
          "<div class=\"diag\"><span class=\"sharebar\" style=\"width:{:.0f}px\"></span>{:.0f}% of the class "
          "({} of {}): <b>{}</b> <code class=\"cause\">{}</code><div class=\"who\">{}</div>{}</div>",
          std::max(2.0, 80 * share), 100 * share, d.count, c.of, inline_code_html(d.text),
          html_escape(d.cause), who,
          !d.example.empty() ? "<details><summary>as one of them reads</summary>" +
                                   inline_code_html(d.example) + "</details>"
                             : "");
    };
    std::string diagnoses;
    for (std::size_t i = 0; i < c.diagnoses.size() && i < 3; ++i) diagnoses += cause(c.diagnoses[i]);
    if (c.diagnoses.size() > 3) {
      diagnoses += fmt::format("<details><summary>{} other cause{}</summary>", c.diagnoses.size() - 3,
                               c.diagnoses.size() == 4 ? "" : "s");
      for (std::size_t i = 3; i < c.diagnoses.size(); ++i) diagnoses += cause(c.diagnoses[i]);
      diagnoses += "</details>";
    }
    out += fmt::format(
        "<tr><td>{}{}</td><td class=\"num\">{} of {} ({:.0f}%)</td><td class=\"num\">{}</td><td "
        "class=\"share\">{}</td></tr>\n",
        html_escape(c.check),
        c.name.empty() ? "" : "<br><span class=\"note\">" + html_escape(c.name) + "</span>", c.failed, c.of,
        100 * c.failed / of, c.not_run, diagnoses);
  }
  if (open) out += "</table>\n";
  return out;
}

}  // namespace

std::string batch_html(const BatchView& batch) {
  const std::vector<GradebookRow> rows = gradebook_rows(batch);
  const std::vector<std::string>& labs = batch.lab_ids;
  const std::vector<double>& lab_max = batch.lab_max;
  std::string body = fmt::format("<h1>cudalab: {} submissions</h1>\n", rows.size());
  // Each lab's distribution: 10 bins from 0 to its maximum.
  for (std::size_t l = 0; l < labs.size(); ++l) {
    const double max = l < lab_max.size() && lab_max[l] > 0 ? lab_max[l] : 1;
    std::vector<int> bins(10, 0);
    // A submission without a grade counts as 0, as the gradebook's total does.
    for (const auto& row : rows) {
      const double v = l < row.labs.size() ? row.labs[l].value_or(0) : 0;
      bins[std::clamp(static_cast<int>(v / max * 10), 0, 9)] += 1;
    }
    const int most = std::max(1, *std::max_element(bins.begin(), bins.end()));
    Frame f;
    f.height = 220;
    f.bottom = 44;
    std::string svg = svg_open(f, fmt::format("{}: points of {} submissions", labs[l], rows.size()));
    const double w = f.plot_w() / 10, y0 = f.top + f.plot_h();
    for (int b = 0; b < 10; ++b) {
      const double h = (f.plot_h() - 16) * bins[b] / most;  // room above the tallest bar for its count
      svg += fmt::format(
          "<rect class=\"bin\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"#1f77b4\"><title>{:g} "
          "to {:g}: {}</title></rect>\n<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" "
          "text-anchor=\"middle\">{:g}</text>\n",
          f.left + b * w + 2, y0 - h, w - 4, h, max * b / 10, max * (b + 1) / 10, bins[b], f.left + b * w,
          y0 + 16, max * b / 10);
      if (bins[b])
        svg +=
            fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n",
                        f.left + b * w + w / 2, y0 - h - 4, bins[b]);
    }
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{:g}</text>\n",
                       f.left + 10 * w, y0 + 16, max);
    // The axes' titles; the count axis's 0 and its largest bar.
    svg += fmt::format(
        "<text class=\"axis x\" x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"middle\">points (of "
        "{:g})</text>\n<text class=\"axis y\" x=\"18\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"middle\" "
        "transform=\"rotate(-90 18 {:.1f})\">number of submissions</text>\n",
        f.left + f.plot_w() / 2, f.height - 6, max, f.top + f.plot_h() / 2, f.top + f.plot_h() / 2);
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2:.1f}\" stroke=\"#999\"/><text x=\"{3}\" "
        "y=\"{4:.1f}\" "
        "font-size=\"11\" text-anchor=\"end\">0</text><text x=\"{3}\" y=\"{5:.1f}\" font-size=\"11\" "
        "text-anchor=\"end\">{6}</text>\n",
        f.left, y0, f.top, f.left - 6, y0, y0 - (f.plot_h() - 16) + 4, most);
    body += "<figure>" + svg + "</svg></figure>\n";
  }
  body += class_tables(class_view(batch));
  // Wider than the page with many labs: it scrolls inside its own box.
  body += "<h2>Submissions</h2>\n<div class=\"wide\"><table>\n<tr><th>submission</th><th>total</th>";
  for (const auto& l : labs) body += "<th>" + html_escape(l) + "</th>";
  body += "<th>status</th></tr>\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const GradebookRow& row = rows[i];
    body +=
        fmt::format("<tr><td><a href=\"{0}/report.html\">{0}</a></td><td class=\"num\">{1:.2f} / {2:g}</td>",
                    html_escape(row.id), row.score, row.max_score);
    for (std::size_t l = 0; l < labs.size(); ++l)
      body += l < row.labs.size() && row.labs[l] ? fmt::format("<td>{:.2f}</td>", *row.labs[l]) : "<td></td>";
    const SubmissionStatus st = submission_status(batch.entries[i]);
    body += fmt::format("<td class=\"{}\">{}</td></tr>\n",
                        st.word == "graded" && st.days_late == 0 ? "status-graded" : "status-bad",
                        html_escape(st.text()));
  }
  body += "</table></div>\n";
  return page("cudalab: batch", body);
}

}  // namespace cudalab
