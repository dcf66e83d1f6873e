// The normal test suite's side of the fuzz targets: built with the default
// compiler (no libFuzzer), it feeds every file of the given directories to the
// target's LLVMFuzzerTestOneInput, as libFuzzer does when given files. A broken
// property aborts, which fails the CTest test; so does a crash under the
// sanitizer build (scripts/test --sanitize=address).
//
// Usage: fuzz_replay_<target> CORPUS_DIR [--optional] [DIR…]
// Directories after --optional may be missing (a target without regressions yet).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  bool optional = false;
  std::size_t total = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--optional") {
      optional = true;
      continue;
    }
    if (!fs::is_directory(arg)) {
      if (optional)
        continue;
      std::fprintf(stderr, "replay: %s is not a directory\n", arg.c_str());
      return 2;
    }
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(arg))
      if (e.is_regular_file() && e.path().filename().string()[0] != '.'
          && e.path().extension() != ".md")
        files.push_back(e.path());
    std::sort(files.begin(), files.end());
    if (files.empty() && !optional) {
      std::fprintf(stderr, "replay: %s holds no inputs\n", arg.c_str());
      return 2;
    }
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
      // Named before it runs: if it crashes, the last line says which input did it.
      std::fprintf(stderr, "replay: %s\n", f.c_str());
      // A copy of exactly the input's size, so ASan sees any overread.
      std::vector<std::uint8_t> copy(bytes.begin(), bytes.end());
      auto* data = copy.empty() ? nullptr : copy.data();
      LLVMFuzzerTestOneInput(data, copy.size());
      ++total;
    }
  }
  std::printf("replay: %zu inputs, no crash and no broken property\n", total);
  return 0;
}
