// tessera train: a loss curve as a self-contained SVG file (no plotting dependency).
//
// Plain data in, text out: render_svg returns the document, write_svg writes it and throws
// tsr::Error (naming the path and errno text) when the file cannot be written. Thread-safe
// (no shared state).
#pragma once

#include <string>
#include <vector>

namespace tessera_train {

struct Series {
  std::string label;
  std::string color;  // any SVG color ("#1f77b4")
  std::vector<double> x, y;
};

struct PlotSpec {
  std::string title, x_label, y_label;
  int width = 720, height = 420;
  bool log_y = false;  // losses span decades: a log axis keeps the tail readable
};

// Non-finite points are skipped; an empty plot still renders its axes.
std::string render_svg(const PlotSpec& spec, const std::vector<Series>& series);
void write_svg(const std::string& path, const PlotSpec& spec, const std::vector<Series>& series);

}  // namespace tessera_train
