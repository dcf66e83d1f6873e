#pragma once
// What the micro benchmarks (bench/*_bench.cpp) share: reading a fixture file and
// timing a call, wall and CPU, per iteration.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

namespace receiptd::bench {

// The whole file, or exits with a message: a benchmark without its data is no benchmark.
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(1);
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Calls f once to warm up (first-use caches: provider fetches, a remembered
// chain, certificate extension caches), then `iterations` times, and prints the
// mean wall and CPU time per call.
template <class F>
void measure(const char* label, int iterations, F&& f) {
  f();
  auto wall0 = std::chrono::steady_clock::now();
  std::clock_t cpu0 = std::clock();
  for (int i = 0; i < iterations; ++i)
    f();
  std::clock_t cpu1 = std::clock();
  auto wall1 = std::chrono::steady_clock::now();
  double wall_us = std::chrono::duration<double, std::micro>(wall1 - wall0).count() / iterations;
  double cpu_us = 1e6 * static_cast<double>(cpu1 - cpu0) / CLOCKS_PER_SEC / iterations;
  std::printf("  %-44s %8.1f us wall %8.1f us cpu\n", label, wall_us, cpu_us);
}

} // namespace receiptd::bench
