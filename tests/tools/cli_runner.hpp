// Runs the `tessera` command (path in TSR_CLI) as a subprocess and captures stdout+stderr and
// the exit status. Shared by tests/tools and tests/loader.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace tsr_test {

struct CliResult {
  int exit_code = -1;  // -1 when it did not exit normally
  int signal = 0;      // the signal that ended it, if any
  std::string output;  // stdout and stderr, interleaved
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// `args` is appended to the command line as is (quote paths with shell_quote). The command runs
// without TESSERA_PLUGIN_PATH unless env_prefix sets it (e.g. "TESSERA_PLUGIN_PATH=/x").
inline CliResult run_cli(const std::string& cli, const std::string& args, const std::string& env_prefix = "") {
  CliResult r;
  std::string cmd = "env -u TESSERA_PLUGIN_PATH " + env_prefix + " " + shell_quote(cli) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  int st = pclose(p);
  if (st != -1 && WIFEXITED(st)) r.exit_code = WEXITSTATUS(st);
  if (st != -1 && WIFSIGNALED(st)) r.signal = WTERMSIG(st);
  return r;
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Whether the cpu backend was built beside the command (the test target defines TSR_HAVE_CPU).
#ifdef TSR_HAVE_CPU
inline constexpr bool kHaveCpu = true;
#else
inline constexpr bool kHaveCpu = false;
#endif

}  // namespace tsr_test
