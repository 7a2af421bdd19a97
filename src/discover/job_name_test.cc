#include "discover/job_name.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/temp_dir.h"
#include "discover/fake_tree_test_util.h"

namespace vigil::discover {
namespace {

JobName Name(const std::vector<std::string>& argv, const std::string& comm = "") {
  return JobNameFromCmdline(argv, comm);
}

TEST(JobNameTest, PythonScriptIsTheJob) {
  EXPECT_EQ(Name({"python", "train.py", "--x", "1"}), (JobName{"train", JobNameKind::kScript}));
  EXPECT_EQ(Name({"/usr/bin/python3.11", "-u", "/home/ann/proj/pretrain.py"}).name, "pretrain");
  EXPECT_EQ(Name({"python3", "-W", "ignore", "./scripts/eval_v2.py", "--config", "cfg.py"}).name,
            "eval_v2");
}

TEST(JobNameTest, LaunchersAreSeenThrough) {
  EXPECT_EQ(Name({"torchrun", "--nproc_per_node", "8", "train.py", "--lr", "3e-4"}),
            (JobName{"train", JobNameKind::kScript}));
  // What torchrun's own process looks like in /proc.
  EXPECT_EQ(Name({"/usr/bin/python3", "/usr/local/bin/torchrun", "--nnodes=1", "finetune.py"}).name,
            "finetune");
  EXPECT_EQ(Name({"deepspeed", "--num_gpus", "8", "sft.py", "--deepspeed", "ds.json"}).name, "sft");
  EXPECT_EQ(Name({"mpirun", "-np", "4", "-mca", "btl", "^openib", "python", "hvd.py"}).name, "hvd");
  EXPECT_EQ(Name({"accelerate", "launch", "--num_processes", "2", "run_glue.py"}).name, "run_glue");
  EXPECT_EQ(Name({"numactl", "-m", "0", "python", "train.py"}).name, "train");
}

TEST(JobNameTest, Modules) {
  EXPECT_EQ(Name({"python", "-m", "mymod", "--cfg", "cfg.py"}),
            (JobName{"mymod", JobNameKind::kModule}));
  EXPECT_EQ(Name({"python3", "-m", "torch.distributed.run", "--nproc_per_node", "8", "pre.py"}),
            (JobName{"pre", JobNameKind::kScript}));
  EXPECT_EQ(Name({"python", "-m", "torch.distributed.run", "-m", "pkg.trainer"}),
            (JobName{"pkg.trainer", JobNameKind::kModule}));
  EXPECT_EQ(Name({"torchrun", "--module=vllm.entrypoints.api_server"}).name,
            "vllm.entrypoints.api_server");
  // For other programs "-m" is not a module: llama-server's is the model file.
  EXPECT_EQ(Name({"/opt/llama/llama-server", "-m", "model.gguf", "--port", "8080"}),
            (JobName{"llama-server", JobNameKind::kBinary}));
}

TEST(JobNameTest, ShellStringsAndOtherLanguages) {
  EXPECT_EQ(Name({"bash", "-c", "cd /x && python train.py 2>&1 | tee log.txt"}).name, "train");
  EXPECT_EQ(Name({"sh", "run_all.sh"}), (JobName{"run_all", JobNameKind::kScript}));
  EXPECT_EQ(Name({"java", "-Xmx4g", "-jar", "/opt/app/server.jar"}).name, "server");
  EXPECT_EQ(Name({"Rscript", "analysis.R"}).name, "analysis");
  // setproctitle rewrote the command line into one string.
  EXPECT_EQ(Name({"python train.py --epochs 3"}).name, "train");
}

TEST(JobNameTest, PlainBinariesAndFallbacks) {
  EXPECT_EQ(Name({"/usr/sbin/rsyslogd", "-n", "-iNONE"}, "rsyslogd"),
            (JobName{"rsyslogd", JobNameKind::kBinary}));
  // The basename is not truncated to 15 bytes as comm is.
  EXPECT_EQ(Name({"/opt/bin/my-very-long-inference-server"}, "my-very-long-in").name,
            "my-very-long-inference-server");
  EXPECT_EQ(Name({"nginx: worker process"}, "nginx"), (JobName{"nginx", JobNameKind::kFallback}));
  EXPECT_EQ(Name({"python3"}, "pt_main_thread"), (JobName{"python3", JobNameKind::kFallback}));
  EXPECT_EQ(Name({"timeout", "3600", "./serve"}).kind, JobNameKind::kFallback);
  EXPECT_EQ(Name({"-bash"}).name, "bash");
  EXPECT_EQ(Name({}, "kworker/0:1"), (JobName{"kworker/0:1", JobNameKind::kFallback}));
  EXPECT_EQ(Name({}, ""), (JobName{"unknown", JobNameKind::kFallback}));
}

TEST(JobNameTest, NamesAreBoundedAndPrintable) {
  std::string long_name(500, 'a');
  EXPECT_EQ(Name({"python", long_name + ".py"}).name.size(), 128u);
  EXPECT_EQ(Name({"/bin/ab\x01"
                  "c"})
                .name,
            "ab_c");
  // A cut never leaves half a UTF-8 sequence.
  std::string utf8;
  for (int i = 0; i < 100; ++i) utf8 += "\xc3\xa9";  // é
  std::string got = Name({"python", utf8 + ".py"}).name;
  EXPECT_EQ(got.size(), 128u);
  EXPECT_EQ(got.substr(126), "\xc3\xa9");
  // Hostile input: many tokens, empty arguments.
  std::vector<std::string> many(20000, "-x");
  many[0] = "python";
  EXPECT_EQ(Name(many), (JobName{"python", JobNameKind::kFallback}));
  EXPECT_EQ(Name({"", "", "a.py"}).name, "a");
}

TEST(SplitCmdlineTest, NulSeparated) {
  using V = std::vector<std::string>;
  EXPECT_EQ(SplitCmdline(std::string("python\0train.py\0", 16)), (V{"python", "train.py"}));
  EXPECT_EQ(SplitCmdline(std::string("a\0\0b", 4)), (V{"a", "", "b"}));
  EXPECT_EQ(SplitCmdline("no-nul"), (V{"no-nul"}));
  EXPECT_TRUE(SplitCmdline("").empty());
  EXPECT_TRUE(SplitCmdline(std::string("\0\0", 2)).empty());
}

TEST(ProcessJobNameTest, ReadsFakeProc) {
  TempDir dir;
  testing::FakeProc proc(dir.Join("proc"));
  proc.AddProcess(42, {"python", "-u", "train.py"}, "pt_main_thread");
  proc.AddProcess(2, {}, "kthreadd");
  auto name = ProcessJobName(42, proc.root());
  ASSERT_TRUE(name.ok()) << name.status().ToString();
  EXPECT_EQ(name->name, "train");
  EXPECT_EQ(ProcessJobName(2, proc.root()).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ProcessJobName(7, proc.root()).status().code(), StatusCode::kNotFound);
}

TEST(ProcessJobNameTest, ReadsRealProc) {
  auto name = ProcessJobName(static_cast<int>(::getpid()));
  ASSERT_TRUE(name.ok()) << name.status().ToString();
  EXPECT_EQ(name->name, "discover_test");
  EXPECT_EQ(name->kind, JobNameKind::kBinary);
}

}  // namespace
}  // namespace vigil::discover
