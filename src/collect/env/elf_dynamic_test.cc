#include "collect/env/elf_dynamic.h"

#include <gtest/gtest.h>

#include <random>

#include "collect/env/elf_test_util.h"

namespace vigil::collect {
namespace {

using testing::BuildTestElf;
using testing::TestElfSpec;

std::string Torch() {
  return BuildTestElf({"libtorch_cuda.so",
                       {"libcudart.so.12", "libcudnn.so.9"},
                       "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN",
                       ""});
}

TEST(ElfDynamicTest, ReadsSonameNeededAndPaths) {
  auto d = ReadElfDynamic(Torch());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->soname, "libtorch_cuda.so");
  EXPECT_EQ(d->needed, (std::vector<std::string>{"libcudart.so.12", "libcudnn.so.9"}));
  EXPECT_EQ(d->rpath, (std::vector<std::string>{"$ORIGIN/../../nvidia/cudnn/lib", "$ORIGIN"}));
  EXPECT_TRUE(d->runpath.empty());

  auto r = ReadElfDynamic(BuildTestElf({"", {}, "", "/a::/b"}));
  ASSERT_TRUE(r.ok());
  // An empty element is the current directory to glibc.
  EXPECT_EQ(r->runpath, (std::vector<std::string>{"/a", ".", "/b"}));
}

TEST(ElfDynamicTest, NotAnElfIsInvalidArgument) {
  for (std::string_view bytes :
       {std::string_view(""), std::string_view("hello world"), std::string_view("!<arch>\n")}) {
    auto d = ReadElfDynamic(bytes);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(ElfDynamicTest, EveryTruncationFailsCleanly) {
  const std::string elf = Torch();
  for (size_t n = 4; n < elf.size(); ++n) {
    auto d = ReadElfDynamic(std::string_view(elf).substr(0, n));
    // A cut inside the last string's padding may still parse; anything
    // shorter must say it is broken, never crash or read past the end.
    if (!d.ok()) {
      EXPECT_EQ(d.status().code(), StatusCode::kCorruption) << n;
      EXPECT_NE(d.status().message().find("bad ELF file"), std::string::npos);
    }
  }
}

TEST(ElfDynamicTest, HostileOffsetsAreRejected) {
  std::string elf = Torch();
  auto put = [&](uint64_t off, uint64_t v, int w) {
    std::string e = elf;
    testing::PutLe(&e, off, v, w);
    return e;
  };
  struct Case {
    std::string bytes;
    const char* message;
  } cases[] = {
      {put(32, 1ull << 62, 8), "program headers beyond"},
      {put(56, 60000, 2), "too many program headers"},
      {put(54, 8, 2), "entries too small"},
      {put(64 + 56 + 8, 1ull << 40, 8), "dynamic section beyond"},  // PT_DYNAMIC offset
      {put(64 + 56 + 32, 1ull << 40, 8), "dynamic section beyond"},
      {put(4, 7, 1), "unknown class"},
      {put(5, 9, 1), "unknown byte order"},
  };
  for (const Case& c : cases) {
    auto d = ReadElfDynamic(c.bytes);
    ASSERT_FALSE(d.ok()) << c.message;
    EXPECT_NE(d.status().message().find(c.message), std::string::npos) << d.status().message();
  }
}

TEST(ElfDynamicTest, StringOffsetBeyondTheTableIsCorruption) {
  std::string elf = Torch();
  // The first dynamic entry is DT_NEEDED; point its string far away.
  testing::PutLe(&elf, 64 + 2 * 56 + 8, 1u << 30, 8);
  auto d = ReadElfDynamic(elf);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("string offset beyond"), std::string::npos);
}

TEST(ElfDynamicTest, RandomMutationsNeverCrash) {
  const std::string base = Torch();
  std::mt19937 rng(17);
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string e = base;
    int flips = 1 + static_cast<int>(rng() % 8);
    for (int f = 0; f < flips; ++f) e[rng() % e.size()] = static_cast<char>(rng());
    if (rng() % 4 == 0) e.resize(rng() % e.size());
    auto d = ReadElfDynamic(e);
    if (d.ok()) {
      ++parsed;
      for (const std::string& s : d->needed) EXPECT_LE(s.size(), e.size());
    }
  }
  EXPECT_GT(parsed, 0);  // the mutations sometimes leave a readable file
}

TEST(ElfDynamicTest, ReadErrorsPassThrough) {
  auto failing = [](uint64_t, size_t) -> Result<std::string> { return IoError("disk gone"); };
  auto d = ReadElfDynamic(failing, 1000);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(), "disk gone");
}

TEST(ElfDynamicTest, AStaticFileNeedsNothing) {
  std::string elf = BuildTestElf({"", {}, "", ""});
  testing::PutLe(&elf, 64 + 56, 4, 4);  // PT_DYNAMIC -> PT_NOTE
  auto d = ReadElfDynamic(elf);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->needed.empty());
}

}  // namespace
}  // namespace vigil::collect
