// A stand-in for libFuzzer's driver, so every fuzz target also runs as a plain
// test under GCC and the ASan/UBSan build: it feeds each file of the seed
// corpora, then a fixed number of deterministic mutations of them (byte flips,
// truncations, splices, insertions of interesting bytes). Coverage-guided
// fuzzing proper uses clang and -DVIGIL_FUZZ=ON (see CMakeLists.txt).
//
// Usage: TARGET [--iterations N] [--seed S] FILE_OR_DIR...
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void Collect(const std::string& path, std::vector<std::string>* out) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR* d = opendir(path.c_str());
    if (d == nullptr) return;
    std::vector<std::string> names;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    }
    closedir(d);
    std::sort(names.begin(), names.end());
    for (const auto& n : names) Collect(path + "/" + n, out);
    return;
  }
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  out->push_back(ss.str());
}

void Run(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

std::string Mutate(const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  std::string s = corpus[rng() % corpus.size()];
  static const char kInteresting[] = {'\0', '\xff', '\x7f', '\x80', '\n', '"', '\\', '{', '}', '='};
  int edits = 1 + static_cast<int>(rng() % 8);
  for (int i = 0; i < edits; ++i) {
    switch (rng() % 6) {
      case 0:
        if (!s.empty()) s[rng() % s.size()] ^= static_cast<char>(1u << (rng() % 8));
        break;
      case 1:
        if (!s.empty()) s.resize(rng() % s.size());
        break;
      case 2:
        s.insert(s.begin() + static_cast<long>(s.empty() ? 0 : rng() % s.size()),
                 kInteresting[rng() % sizeof(kInteresting)]);
        break;
      case 3: {
        const std::string& other = corpus[rng() % corpus.size()];
        if (!other.empty()) s += other.substr(rng() % other.size());
        break;
      }
      case 4:
        if (s.size() > 1) {
          size_t a = rng() % s.size(), len = rng() % (s.size() - a);
          s.erase(a, len);
        }
        break;
      default:
        if (!s.empty()) s[rng() % s.size()] = static_cast<char>(rng());
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  long iterations = 20000;
  uint64_t seed = 1;
  std::vector<std::string> corpus;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = std::atol(argv[++i]);
    } else if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else {
      Collect(argv[i], &corpus);
    }
  }
  if (corpus.empty()) corpus.push_back("");
  for (const auto& c : corpus) Run(c);
  std::mt19937_64 rng(seed);
  for (long i = 0; i < iterations; ++i) Run(Mutate(corpus, rng));
  std::printf("%zu seed inputs and %ld mutations ran without a crash\n", corpus.size(), iterations);
  return 0;
}
