#include "svg_plot.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tessera/error.hpp"

namespace tessera_train {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

// About n "nice" tick values (1, 2, 5 x 10^k) covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int n) {
  std::vector<double> out;
  double span = hi - lo;
  if (!(span > 0)) return {lo};
  double raw = span / n, mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag * (raw / mag < 1.5 ? 1 : raw / mag < 3.5 ? 2 : raw / mag < 7.5 ? 5 : 10);
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
    out.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  return out;
}

}  // namespace

std::string render_svg(const PlotSpec& spec, const std::vector<Series>& series) {
  const double W = spec.width, H = spec.height, left = 70, right = 20, top = 40, bottom = 50;
  const double pw = W - left - right, ph = H - top - bottom;
  auto ty = [&](double y) { return spec.log_y ? std::log10(y) : y; };
  auto usable = [&](double x, double y) { return std::isfinite(x) && std::isfinite(y) && (!spec.log_y || y > 0); };

  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const Series& s : series)
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i)
      if (usable(s.x[i], s.y[i])) {
        x0 = std::min(x0, s.x[i]), x1 = std::max(x1, s.x[i]);
        y0 = std::min(y0, ty(s.y[i])), y1 = std::max(y1, ty(s.y[i]));
      }
  if (!std::isfinite(x0)) x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 <= y0) y0 -= 0.5, y1 += 0.5;
  double pad = (y1 - y0) * 0.05;
  y0 -= pad, y1 += pad;
  auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * pw; };
  auto py = [&](double y) { return top + (1 - (ty(y) - y0) / (y1 - y0)) * ph; };

  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 " << W
    << ' ' << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << W / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" << escape(spec.title)
    << "</text>\n";
  // Grid and tick labels.
  for (double t : nice_ticks(x0, x1, 6)) {
    o << "<line x1=\"" << px(t) << "\" y1=\"" << top << "\" x2=\"" << px(t) << "\" y2=\"" << top + ph
      << "\" stroke=\"#ddd\"/>\n";
    o << "<text x=\"" << px(t) << "\" y=\"" << top + ph + 16 << "\" text-anchor=\"middle\">" << num(t) << "</text>\n";
  }
  std::vector<double> yt;
  if (spec.log_y) {
    for (double e = std::floor(y0); e <= std::ceil(y1); e += 1)
      for (double m : {1.0, 2.0, 5.0}) {
        double v = std::log10(m) + e;
        if (v >= y0 && v <= y1) yt.push_back(v);
      }
  } else {
    yt = nice_ticks(y0, y1, 6);
  }
  for (double t : yt) {
    double y = top + (1 - (t - y0) / (y1 - y0)) * ph;
    o << "<line x1=\"" << left << "\" y1=\"" << y << "\" x2=\"" << left + pw << "\" y2=\"" << y
      << "\" stroke=\"#ddd\"/>\n";
    o << "<text x=\"" << left - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">"
      << num(spec.log_y ? std::pow(10, t) : t) << "</text>\n";
  }
  o << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << pw << "\" height=\"" << ph
    << "\" fill=\"none\" stroke=\"#333\"/>\n";
  o << "<text x=\"" << left + pw / 2 << "\" y=\"" << H - 10 << "\" text-anchor=\"middle\">" << escape(spec.x_label)
    << "</text>\n";
  o << "<text transform=\"translate(16," << top + ph / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
    << escape(spec.y_label) << (spec.log_y ? " (log)" : "") << "</text>\n";
  // Curves and legend.
  int legend_row = 0;
  for (const Series& s : series) {
    o << "<polyline fill=\"none\" stroke=\"" << escape(s.color) << "\" stroke-width=\"1.5\" points=\"";
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i)
      if (usable(s.x[i], s.y[i])) o << num(px(s.x[i])) << ',' << num(py(s.y[i])) << ' ';
    o << "\"/>\n";
    double ly = top + 14 + 16 * legend_row++;
    o << "<line x1=\"" << left + pw - 150 << "\" y1=\"" << ly - 4 << "\" x2=\"" << left + pw - 130 << "\" y2=\""
      << ly - 4 << "\" stroke=\"" << escape(s.color) << "\" stroke-width=\"2\"/>\n";
    o << "<text x=\"" << left + pw - 125 << "\" y=\"" << ly << "\">" << escape(s.label) << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

void write_svg(const std::string& path, const PlotSpec& spec, const std::vector<Series>& series) {
  std::string doc = render_svg(spec, series);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (f) f << doc;
  if (!f || !f.flush())
    throw tsr::Error(TSR_UNAVAILABLE, "svg_plot: cannot write " + path + ": " + std::strerror(errno));
}

}  // namespace tessera_train
