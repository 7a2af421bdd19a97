// The matrix's data and file format: the built-in data is consistent, every
// row cites an https source, and update files round-trip or fail naming the
// line.
#include "env/matrix.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "core/temp_dir.h"

namespace vigil::env {
namespace {

constexpr char kSrc[] = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html";

std::string Line(std::string_view table, std::string_view fields) {
  return std::string(table) + " | " + std::string(fields) + " | " + kSrc + "\n";
}

TEST(BuiltinMatrixTest, IsConsistent) {
  const Matrix& m = Matrix::Builtin();
  std::vector<std::string> problems = m.Problems();
  for (const std::string& p : problems) ADD_FAILURE() << p;
}

TEST(BuiltinMatrixTest, EveryTableHasRowsAndEveryRowAnHttpsSource) {
  const Matrix& m = Matrix::Builtin();
  std::map<std::string, int> per_table;
  for (const Row& row : m.rows()) {
    ++per_table[row.table];
    EXPECT_EQ(row.source.rfind("https://", 0), 0u) << row.origin;
  }
  for (const TableSpec& spec : TableSpecs()) {
    EXPECT_GT(per_table[std::string(spec.name)], 0) << spec.name;
  }
  EXPECT_GE(m.cuda_drivers().size(), 40u);
  EXPECT_GE(m.gpus().size(), 30u);
}

TEST(BuiltinMatrixTest, SourcesAreThePublishersPages) {
  // Each table cites the page that publishes its numbers, not a copy.
  std::map<std::string, std::set<std::string>> hosts;
  for (const Row& row : Matrix::Builtin().rows()) {
    std::string rest = row.source.substr(8);
    hosts[row.table].insert(rest.substr(0, rest.find('/')));
  }
  EXPECT_EQ(hosts["cuda_driver"], std::set<std::string>{"docs.nvidia.com"});
  EXPECT_EQ(hosts["gpu"], std::set<std::string>{"developer.nvidia.com"});
  EXPECT_EQ(hosts["cudnn"], std::set<std::string>{"docs.nvidia.com"});
  EXPECT_EQ(hosts["tensorflow"], std::set<std::string>{"www.tensorflow.org"});
  EXPECT_EQ(hosts["jax"], std::set<std::string>{"docs.jax.dev"});
  EXPECT_EQ(hosts["torch"], std::set<std::string>{"github.com"});
}

TEST(BuiltinMatrixTest, KnownRowsHaveTheirPublishedValues) {
  const Matrix& m = Matrix::Builtin();
  std::map<std::string, std::string> driver;
  for (const CudaDriverRow& r : m.cuda_drivers())
    driver[r.cuda.ToString()] = r.min_driver.ToString();
  EXPECT_EQ(driver["12.4.1"], "550.54.15");
  EXPECT_EQ(driver["12.0.0"], "525.60.13");
  EXPECT_EQ(driver["11.8.0"], "520.61.5");  // 520.61.05
  EXPECT_EQ(driver["13.0.0"], "580.65.6");
  std::map<int, std::string> floor;
  for (const MinorCompatRow& r : m.minor_compat()) floor[r.cuda_major] = r.min_driver.ToString();
  EXPECT_EQ(floor[11], "450.80.2");
  EXPECT_EQ(floor[12], "525.60.13");
  EXPECT_EQ(floor[13], "580");
}

TEST(MatrixFileTest, RoundTripsThroughSerialize) {
  const Matrix& m = Matrix::Builtin();
  std::string text = m.Serialize();
  auto again = Matrix::Parse(text, "serialized");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_EQ(again->rows().size(), m.rows().size());
  for (size_t i = 0; i < m.rows().size(); ++i) {
    EXPECT_EQ(again->rows()[i].table, m.rows()[i].table);
    EXPECT_EQ(again->rows()[i].fields, m.rows()[i].fields);
    EXPECT_EQ(again->rows()[i].source, m.rows()[i].source);
  }
  EXPECT_EQ(again->Serialize(), text);
}

TEST(MatrixFileTest, MalformedLinesFailNamingTheLine) {
  struct Case {
    std::string text;
    std::string want;  // in the message
  };
  std::vector<Case> cases = {
      {"# c\n\nnope | 1 | " + std::string(kSrc) + "\n", "upd:3: unknown table \"nope\""},
      {Line("cuda_driver", "12.4.0"), "upd:1: cuda_driver rows have 4"},
      {Line("cuda_driver", "12.4.0 | 550.x"), "upd:1: cuda_driver: min_driver: not a version"},
      {"cuda_driver | 12.4.0 | 550.54.14 | http://example.com/x\n",
       "upd:1: cuda_driver: the source"},
      {"cuda_driver | 12.4.0 | 550.54.14 | -\n", "is not an https URL"},
      {Line("cuda_driver", "12.4.0 | 550.54.14") + Line("cuda_driver", "12.4.0 | 550.54.15"),
       "upd:2: cuda_driver: duplicate of upd:1"},
      {Line("gpu", "H100 | 9 | datacenter"), "upd:1: gpu: not a compute capability"},
      {Line("forward_compat", "datacenter | maybe"), "upd:1: forward_compat: support"},
      {Line("torch", "2.5 | cu12x | 12.4 | 9.1.0.70 | - | 3.9 | 3.12"), "not a CUDA wheel variant"},
      {Line("torch_archs", "2.5 | cu124 | sm_90 sm_86"), "not in ascending order"},
      {Line("torch_archs", "2.5 | cu124 | sm_86 gfx90a"), "is not sm_XY"},
      {Line("torch", "- | cu124 | 12.4 | 9.1.0.70 | - | 3.9 | 3.12"),
       "key column release is empty"},
  };
  for (const Case& c : cases) {
    auto m = Matrix::Parse(c.text, "upd");
    ASSERT_FALSE(m.ok()) << c.text;
    EXPECT_NE(m.status().message().find(c.want), std::string::npos)
        << "got: " << m.status().message() << "\nwant: " << c.want;
  }
}

TEST(MatrixFileTest, UpdateRowsReplaceSameKeyAndAddNewOnes) {
  std::string update =
      Line("cuda_driver", "12.4.0 | 550.54.99") + Line("gpu", "RTX 5060 | 12.0 | consumer");
  auto u = Matrix::Parse(update, "upd");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  auto merged = Matrix::Builtin().MergedWith(*u);
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->rows().size(), Matrix::Builtin().rows().size() + 1);
  int rows_124 = 0;
  for (const CudaDriverRow& r : merged->cuda_drivers()) {
    if (r.cuda == ParseVersion("12.4.0").value()) {
      ++rows_124;
      EXPECT_EQ(r.min_driver.ToString(), "550.54.99");
    }
  }
  EXPECT_EQ(rows_124, 1);
  EXPECT_EQ(merged->gpus().back().model, "RTX 5060");
}

TEST(MatrixFileTest, UpdateFileThatContradictsTheTablesIsRefused) {
  TempDir dir;
  std::string path = dir.path() + "/update.txt";
  // CUDA 12.5 needing an older driver than 12.4 is a typo in one of them.
  std::ofstream(path) << Line("cuda_driver", "12.5.0 | 540.1");
  auto m = Matrix::BuiltinWithUpdateFile(path);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("CUDA 12.5.0 needs driver 540.1"), std::string::npos)
      << m.status().message();

  std::ofstream(path) << Line("gpu", "RTX 5060 | 12.0 | consumer");
  auto ok = Matrix::BuiltinWithUpdateFile(path);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->gpus().size(), Matrix::Builtin().gpus().size() + 1);

  auto missing = Matrix::BuiltinWithUpdateFile(dir.path() + "/none.txt");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("matrix update file"), std::string::npos);
}

TEST(MatrixProblemsTest, FindsContradictoryRows) {
  struct Case {
    std::string rows;
    std::string want;
  };
  std::vector<Case> cases = {
      // The wheel says cu124 but the row says CUDA 12.1.
      {Line("torch", "2.5 | cu124 | 12.1 | 9.1.0.70 | - | 3.9 | 3.12"),
       "the variant names CUDA 12.4"},
      // A wheel on a CUDA whose driver needs nobody recorded.
      {Line("torch", "2.5 | cu127 | 12.7 | 9.1.0.70 | - | 3.9 | 3.12"), "driver need is unknown"},
      // cuDNN 9.1.0 supports up to CUDA 12.4: a cu126 wheel cannot bundle it.
      {Line("torch", "2.6 | cu126 | 12.6 | 9.1.0.70 | - | 3.9 | 3.13"),
       "supports CUDA 12.0-12.4 only"},
      {Line("torch_archs", "2.99 | cu124 | sm_90"), "has no torch row"},
      {Line("gpu", "Z100 | 9.0 | spaceship"), "has no forward_compat row"},
      {Line("gpu", "rtx-4090 | 8.9 | consumer"), "are one name"},
      {Line("tensorflow", "2.19.0 | 3.9 | 3.12 | 9.3 | 12.2"), "older than 2.18"},
      {Line("minor_compat", "12 | 590"), "above what its newest toolkit needs"},
      {Line("cudnn", "9.1.0 | 12.4 | 12.0 | 525.60.13"), "not a range"},
  };
  for (const Case& c : cases) {
    auto u = Matrix::Parse(c.rows, "upd");
    ASSERT_TRUE(u.ok()) << u.status().ToString();
    auto merged = Matrix::Builtin().MergedWith(*u);
    ASSERT_TRUE(merged.ok());
    std::vector<std::string> problems = merged->Problems();
    bool found = false;
    for (const std::string& p : problems) found |= p.find(c.want) != std::string::npos;
    EXPECT_TRUE(found) << c.rows << " -> want \"" << c.want << "\" among " << problems.size()
                       << " problems" << (problems.empty() ? "" : ": " + problems[0]);
  }
}

TEST(GpuNameTokensTest, DropsVendorWordsAndSplitsOnPunctuation) {
  EXPECT_EQ(GpuNameTokens("NVIDIA A100-SXM4-80GB"),
            (std::vector<std::string>{"a100", "sxm4", "80gb"}));
  EXPECT_EQ(GpuNameTokens("NVIDIA GeForce RTX 4090"), (std::vector<std::string>{"rtx", "4090"}));
  EXPECT_EQ(GpuNameTokens("Tesla V100-SXM2-16GB"),
            (std::vector<std::string>{"v100", "sxm2", "16gb"}));
}

}  // namespace
}  // namespace vigil::env
