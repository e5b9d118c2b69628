#include "progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace tessera_train {

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof(buf), "%.1fs", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof(buf), "%dm%02ds", static_cast<int>(s / 60), static_cast<int>(s) % 60);
  else
    std::snprintf(buf, sizeof(buf), "%dh%02dm", static_cast<int>(s / 3600), static_cast<int>(s / 60) % 60);
  return buf;
}

Progress::Progress(FILE* out, int64_t first_step, int64_t total_steps, bool quiet)
    : out_(out), first_(first_step), total_(total_steps), quiet_(quiet) {
  tty_ = out_ && isatty(fileno(out_));
  // About 20 plain lines per run: enough to follow, few enough to read.
  plain_every_ = std::max<int64_t>(1, (total_ - first_) / 20);
  start_ = last_draw_ = std::chrono::steady_clock::now();
}

std::string Progress::line(int64_t step, double loss, double lr, double tps) const {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  int64_t done = step - first_, left = total_ - step;
  double eta = done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(left) : NAN;
  char buf[256];
  if (tty_) {
    const int width = 24;
    int filled = total_ > 0 ? static_cast<int>(width * static_cast<double>(step) / static_cast<double>(total_)) : width;
    filled = std::clamp(filled, 0, width);
    std::string bar =
        std::string(static_cast<size_t>(filled), '#') + std::string(static_cast<size_t>(width - filled), '.');
    std::snprintf(buf, sizeof(buf), "[%s] %lld/%lld  loss %.4f  lr %.2e  %.0f tok/s  ETA %s", bar.c_str(),
                  static_cast<long long>(step), static_cast<long long>(total_), loss, lr, tps,
                  format_duration(eta).c_str());
  } else {
    std::snprintf(buf, sizeof(buf), "step %lld/%lld  loss %.4f  lr %.2e  %.0f tok/s  elapsed %s  ETA %s",
                  static_cast<long long>(step), static_cast<long long>(total_), loss, lr, tps,
                  format_duration(elapsed).c_str(), format_duration(eta).c_str());
  }
  return buf;
}

void Progress::update(int64_t step, double loss, double lr, double tps) {
  if (quiet_ || !out_) return;
  auto now = std::chrono::steady_clock::now();
  bool last = step >= total_;
  if (tty_) {
    if (!last && drawn_ && std::chrono::duration<double>(now - last_draw_).count() < min_interval_s_) return;
    // \x1b[K clears what a longer previous line left behind.
    std::fprintf(out_, "\r%s\x1b[K", line(step, loss, lr, tps).c_str());
    drawn_ = true;
  } else {
    if (!last && (step - first_) % plain_every_ != 0) return;
    std::fprintf(out_, "%s\n", line(step, loss, lr, tps).c_str());
  }
  std::fflush(out_);
  last_draw_ = now;
}

void Progress::message(const std::string& text) {
  if (quiet_ || !out_) return;
  if (tty_ && drawn_) std::fprintf(out_, "\r\x1b[K");
  std::fprintf(out_, "%s\n", text.c_str());
  drawn_ = false;
  std::fflush(out_);
}

void Progress::finish() {
  if (quiet_ || !out_) return;
  if (tty_ && drawn_) std::fprintf(out_, "\n");
  drawn_ = false;
  std::fflush(out_);
}

}  // namespace tessera_train
