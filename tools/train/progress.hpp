// tessera train: the progress display on stderr (step/total, loss, tokens/s, ETA).
//
// On a TTY the line is redrawn in place (carriage return, no newline) at most every
// `min_interval_s`; otherwise (a log file, a CI pipe) a plain line is written every
// `plain_every` steps so logs stay readable instead of filling with \r garbage.
// Owns nothing but its FILE* reference (not closed). Not thread-safe: one training loop
// drives one Progress.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tessera_train {

// "1m05s", "12.3s", "2h03m": the ETA and elapsed figures.
std::string format_duration(double seconds);

class Progress {
 public:
  // total_steps: the step count the bar fills to; first_step: where a resumed run starts.
  Progress(FILE* out, int64_t first_step, int64_t total_steps, bool quiet);
  // Forces one mode (tests; the constructor asks isatty(fileno(out))).
  void set_tty(bool tty) { tty_ = tty; }
  void set_plain_every(int64_t n) { plain_every_ = n > 0 ? n : 1; }
  // After finishing `step` (1-based count of completed steps).
  void update(int64_t step, double loss, double lr, double tokens_per_s);
  // A line that must not be overwritten (evaluation results): clears the bar first.
  void message(const std::string& line);
  // Ends the bar line (call before the final summary).
  void finish();

 private:
  std::string line(int64_t step, double loss, double lr, double tokens_per_s) const;
  FILE* out_;
  int64_t first_, total_;
  bool quiet_, tty_ = false, drawn_ = false;
  int64_t plain_every_ = 0;
  double min_interval_s_ = 0.1;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace tessera_train
