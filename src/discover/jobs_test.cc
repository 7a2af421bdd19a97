// Job detection over fake /proc trees (one per launcher, framework and odd
// case in docs/discovery.md "Jobs"), and once over the real /proc.
#include "discover/jobs.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/manual_clock_env.h"
#include "core/temp_dir.h"
#include "discover/fake_tree_test_util.h"

extern char** environ;

namespace vigil::discover {
namespace {

using testing::WriteFile;

constexpr int64_t kBootTime = 1'700'000'000;  // btime in the fake /proc/stat
constexpr const char* kBootId = "4f9e2c1a-77b0-4c1e-9d2a-0e5b8c3f6a21";

// A job id as detection makes it: anchor pid, start ticks, boot.
std::string Id(int pid, uint64_t ticks) { return FormatJobId(pid, ticks, "4f9e2c1a"); }
const std::string kCid = "3f2a9c1d4b5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8";

// Mapped libraries as /proc/<pid>/maps lists them.
const std::vector<std::string> kBase = {
    "/usr/lib/x86_64-linux-gnu/libc.so.6",
    "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0",
    "/usr/lib/x86_64-linux-gnu/libssl.so.3",
};
const std::vector<std::string> kTorch = {
    "/usr/lib/python3/dist-packages/torch/lib/libc10.so",
    "/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so",
    "/usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so",
    "/usr/local/cuda/lib64/libcudart.so.12",
    "/usr/lib/x86_64-linux-gnu/libnccl.so.2",
};
const std::vector<std::string> kTensorFlow = {
    "/opt/venv/lib/python3.11/site-packages/tensorflow/libtensorflow_framework.so.2",
    "/opt/venv/lib/python3.11/site-packages/tensorflow/python/_pywrap_tensorflow_internal.so",
};
const std::vector<std::string> kJax = {
    "/opt/venv/lib/python3.11/site-packages/jaxlib/xla_extension.so",
};
const std::vector<std::string> kCudaOnly = {"/usr/lib/x86_64-linux-gnu/libcuda.so.1"};

std::vector<std::string> Libs(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A fake /proc whose processes have parents, states, maps, environ and cgroup.
class FakeJobProc : public testing::FakeProc {
 public:
  explicit FakeJobProc(std::string root) : FakeProc(std::move(root)) {
    WriteFile(this->root() + "/stat",
              "cpu  1 2 3 4\nintr 1 2 3\nbtime " + std::to_string(kBootTime) + "\nprocesses 9\n");
    WriteFile(this->root() + "/sys/kernel/random/boot_id", std::string(kBootId) + "\n");
  }

  void Add(int pid, int ppid, const std::vector<std::string>& argv, const std::string& comm,
           uint64_t start_ticks = 1000, char state = 'S') {
    AddProcess(pid, argv, comm, start_ticks);
    std::string stat =
        std::to_string(pid) + " (" + comm + ") " + state + " " + std::to_string(ppid);
    for (int field = 5; field <= 52; ++field) {
      stat += " " + (field == 22 ? std::to_string(start_ticks) : std::string("0"));
    }
    WriteFile(PidDir(pid) + "/stat", stat + "\n");
  }

  void Maps(int pid, const std::vector<std::string>& libs) {
    std::string text = "55d0c0000000-55d0c0001000 r-xp 00000000 08:01 1 /usr/bin/python3.11\n";
    text += "55d0c1000000-55d0c2000000 rw-p 00000000 00:00 0                          [heap]\n";
    uint64_t addr = 0x7f0000000000;
    for (const std::string& lib : libs) {
      for (const char* perms : {"r--p", "r-xp", "rw-p"}) {  // each library maps a few segments
        char range[64];
        std::snprintf(range, sizeof(range), "%llx-%llx", static_cast<unsigned long long>(addr),
                      static_cast<unsigned long long>(addr + 0x1000));
        text += std::string(range) + " " + perms + " 00000000 08:01 4242           " + lib + "\n";
        addr += 0x1000;
      }
    }
    WriteFile(PidDir(pid) + "/maps", text + "7ffd0000000-7ffd0001000 rw-p 0 00:00 0 [stack]\n");
  }

  void Environ(int pid, const std::vector<std::string>& vars) {
    std::string text = "PATH=/usr/bin:/bin";
    text.push_back('\0');
    for (const std::string& v : vars) text += v + '\0';
    WriteFile(PidDir(pid) + "/environ", text);
  }

  void Cgroup(int pid, const std::string& text) { WriteFile(PidDir(pid) + "/cgroup", text); }

  // /proc/<pid>/status as the kernel writes it, with the real uid `uid` (the
  // effective, saved and filesystem ones differ, as under a setuid helper).
  void Status(int pid, int64_t uid) {
    std::string u = std::to_string(uid);
    WriteFile(PidDir(pid) + "/status",
              "Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\n"
              "Tgid:\t" +
                  std::to_string(pid) + "\nNgid:\t0\nPid:\t" + std::to_string(pid) +
                  "\nPPid:\t1\nTracerPid:\t0\n"
                  "Uid:\t" +
                  u + "\t0\t0\t0\nGid:\t" + u + "\t" + u + "\t" + u + "\t" + u + "\n");
  }

  // A process with a framework mapped and its environment.
  void Framework(int pid, int ppid, const std::vector<std::string>& argv,
                 const std::vector<std::string>& libs, const std::vector<std::string>& env = {},
                 uint64_t start_ticks = 1000, const std::string& comm = "python3") {
    Add(pid, ppid, argv, comm, start_ticks);
    Maps(pid, Libs(kBase, libs));
    Environ(pid, env);
  }
};

int64_t StartMs(uint64_t ticks) {
  long hz = ::sysconf(_SC_CLK_TCK);
  return kBootTime * 1000 + static_cast<int64_t>(ticks) * 1000 / hz;
}

std::vector<std::string> RankEnv(int rank, int world, int port = 29500) {
  return {"RANK=" + std::to_string(rank),
          "LOCAL_RANK=" + std::to_string(rank),
          "WORLD_SIZE=" + std::to_string(world),
          "LOCAL_WORLD_SIZE=" + std::to_string(world),
          "MASTER_ADDR=127.0.0.1",
          "MASTER_PORT=" + std::to_string(port),
          "TORCHELASTIC_RUN_ID=none"};
}

class JobsTest : public ::testing::Test {
 protected:
  JobsTest() : proc_(dir_.Join("proc")) {
    // Every node has these; none is a job.
    proc_.Add(1, 0, {"/sbin/init", "splash"}, "systemd", 1);
    proc_.Add(2, 0, {}, "kthreadd", 1);
    proc_.Add(50, 1, {"sshd: /usr/sbin/sshd -D [listener]"}, "sshd", 5);
    proc_.Add(60, 50, {"-bash"}, "bash", 900);
  }
  std::vector<DetectedJob> Detect(std::vector<int> gpu_pids = {}) {
    JobDetectionOptions o;
    o.proc_root = proc_.root();
    o.self_pid = 99999;
    o.gpu_pids = std::move(gpu_pids);
    auto r = DetectJobs(o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<DetectedJob>{};
  }
  static std::vector<int> Pids(const DetectedJob& j, JobProcessRole role) {
    std::vector<int> out;
    for (const JobProcess& p : j.processes) {
      if (p.role == role) out.push_back(p.pid);
    }
    return out;
  }
  TempDir dir_;
  FakeJobProc proc_;
};

TEST_F(JobsTest, TorchrunWithFourRanksAndDataLoaderWorkersIsOneJob) {
  proc_.Add(200, 60,
            {"/usr/bin/python3", "/usr/local/bin/torchrun", "--nproc_per_node", "4", "train.py",
             "--lr", "1e-3"},
            "torchrun", 2000);
  proc_.Maps(200, Libs(kBase, kTorch));
  // Pids do not follow ranks.
  const int rank_of[] = {3, 1, 0, 2};
  for (int i = 0; i < 4; ++i) {
    proc_.Framework(201 + i, 200, {"/usr/bin/python3", "-u", "train.py", "--lr", "1e-3"}, kTorch,
                    RankEnv(rank_of[i], 4), 2010, "pt_main_thread");
  }
  // DataLoader workers: forked, so the same cmdline, maps and environ as their rank.
  for (int w : {301, 302}) {
    proc_.Framework(w, 201, {"/usr/bin/python3", "-u", "train.py", "--lr", "1e-3"}, kTorch,
                    RankEnv(3, 4), 2100, "pt_data_worker");
  }
  proc_.Add(303, 203, {"/usr/bin/python3", "-u", "train.py", "--lr", "1e-3"}, "pt_data_worker",
            2100);  // a worker whose maps are unreadable: still a helper

  auto jobs = Detect();
  ASSERT_EQ(jobs.size(), 1u);
  const DetectedJob& j = jobs[0];
  EXPECT_EQ(j.id, Id(200, 2000));
  EXPECT_EQ(j.name, "train");
  EXPECT_EQ(j.kind, JobKind::kTraining);
  EXPECT_EQ(j.framework, Framework::kPyTorch);
  EXPECT_EQ(j.launcher, "torchrun");
  EXPECT_EQ(j.trainer, "");
  EXPECT_EQ(j.world_size, 4);
  EXPECT_EQ(j.master_addr, "127.0.0.1");
  EXPECT_EQ(j.master_port, 29500);
  EXPECT_EQ(j.start_time_ms, StartMs(2000));
  EXPECT_EQ(j.container_id, "");
  ASSERT_EQ(j.processes.size(), 8u);
  EXPECT_EQ(j.processes[0].pid, 200);
  EXPECT_EQ(j.processes[0].role, JobProcessRole::kLauncher);
  EXPECT_EQ(j.processes[0].cmdline,
            "/usr/bin/python3 /usr/local/bin/torchrun --nproc_per_node 4 train.py --lr 1e-3");
  EXPECT_EQ(Pids(j, JobProcessRole::kRank), (std::vector<int>{203, 202, 204, 201}));
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(j.processes[1 + r].rank, r);
    EXPECT_EQ(j.processes[1 + r].local_rank, r);
    EXPECT_EQ(j.processes[1 + r].ppid, 200);
    EXPECT_EQ(j.processes[1 + r].start_time_ms, StartMs(2010));
  }
  EXPECT_EQ(Pids(j, JobProcessRole::kHelper), (std::vector<int>{301, 302, 303}));
  EXPECT_EQ(j.processes[5].rank, -1);

  // The id holds while helpers come and go.
  std::filesystem::remove_all(proc_.PidDir(301));
  auto again = Detect();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].id, j.id);
}

// Issue 13: the same pid was listed as two jobs whose ids differed by one
// second, as btime (the wall-clock boot time, which NTP moves) jittered.
// With a cache, a pass reads a process's maps again only while they may
// still change what detection concludes (JobDetectionCache).
TEST_F(JobsTest, ACacheRereadsMapsOnlyWhileTheyMayChange) {
  long hz = ::sysconf(_SC_CLK_TCK);
  ManualClockEnv clock(StartMs(0) + 3'600'000);  // an hour after boot
  JobDetectionCache cache;
  auto detect = [&] {
    JobDetectionOptions o;
    o.proc_root = proc_.root();
    o.self_pid = 99999;
    o.env = &clock;
    o.cache = &cache;
    auto r = DetectJobs(o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<DetectedJob>{};
  };
  // When the cache last read a process's maps.
  auto read_at = [&](int pid) { return cache.maps.contains(pid) ? cache.maps[pid].read_ms : -1; };
  // Started at boot (an hour old): no framework mapped yet.
  proc_.Add(300, 60, {"/usr/bin/python3", "serve.py"}, "python3", 1000);
  proc_.Maps(300, kBase);
  const int64_t t0 = clock.now;
  EXPECT_TRUE(detect().empty());
  EXPECT_EQ(read_at(300), t0);
  // It imports torch: the next pass keeps what it read a moment ago...
  proc_.Maps(300, Libs(kBase, kTorch));
  clock.now += 5'000;
  EXPECT_TRUE(detect().empty());
  EXPECT_EQ(read_at(300), t0);
  // ...and a pass a minute after the read sees it.
  clock.now += JobDetectionCache::kRecheckMs;
  auto jobs = detect();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].framework, Framework::kPyTorch);
  const int64_t t1 = clock.now;
  EXPECT_EQ(read_at(300), t1);
  // Framework and GPU runtime both mapped: settled, not read again.
  clock.now += 10 * JobDetectionCache::kRecheckMs;
  EXPECT_EQ(detect().size(), 1u);
  EXPECT_EQ(read_at(300), t1);

  // A young process is read at every pass (its imports are still loading).
  uint64_t young = static_cast<uint64_t>((clock.now.load() - StartMs(0) - 10'000) * hz / 1000);
  proc_.Add(310, 60, {"/usr/bin/python3", "eval.py"}, "python3", young);
  proc_.Maps(310, kBase);
  EXPECT_EQ(detect().size(), 1u);
  proc_.Maps(310, Libs(kBase, kTorch));
  clock.now += 1'000;
  EXPECT_EQ(detect().size(), 2u);
  EXPECT_EQ(read_at(310), clock.now);

  // A reused pid is a new process: read at once.
  proc_.Add(300, 60, {"/usr/bin/python3", "serve.py"}, "python3", 1000 + 7);
  proc_.Maps(300, kBase);
  clock.now += 1'000;
  EXPECT_EQ(detect().size(), 1u);  // the new 300 maps nothing yet; 310 is still a job
  EXPECT_EQ(read_at(300), clock.now);
  EXPECT_EQ(cache.maps[300].start_ticks, 1007u);
  // A process gone from /proc is forgotten.
  std::filesystem::remove_all(proc_.PidDir(300));
  detect();
  EXPECT_EQ(read_at(300), -1);
  EXPECT_NE(read_at(310), -1);
}

TEST_F(JobsTest, TheIdHoldsWhenTheBootTimeMoves) {
  proc_.Framework(700, 60, {"/usr/bin/python3", "train.py"}, kTorch, {}, 4321);
  auto first = Detect();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].id, Id(700, 4321));
  for (int64_t btime : {kBootTime + 1, kBootTime - 1, kBootTime + 3600}) {
    WriteFile(proc_.root() + "/stat", "cpu  1 2 3 4\nbtime " + std::to_string(btime) + "\n");
    auto again = Detect();
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0].id, first[0].id) << "btime " << btime;
    EXPECT_EQ(again[0].processes[0].start_ticks, 4321u);
    // The wall-clock start is for display: it moves with btime.
    EXPECT_EQ(again[0].start_time_ms - first[0].start_time_ms, (btime - kBootTime) * 1000);
  }
  // No boot id (an old kernel, a bare fake tree): a fixed placeholder.
  std::filesystem::remove(proc_.root() + "/sys/kernel/random/boot_id");
  EXPECT_EQ(Detect()[0].id, FormatJobId(700, 4321, "00000000"));
}

TEST(JobIdTest, ParsesWhatItFormats) {
  auto p = ParseJobId(FormatJobId(4242, 987654321, "90b22de2"));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->pid, 4242);
  EXPECT_EQ(p->start_ticks, 987654321u);
  EXPECT_EQ(p->boot, "90b22de2");
  auto ray = ParseJobId("2700-9800-90b22de2-02000000");
  ASSERT_TRUE(ray.has_value());
  EXPECT_EQ(ray->pid, 2700);
  // Ids of other forms are not ours to read.
  for (const char* other : {"run-100-1764460800000", "4242-1764460800000", "", "-1-2-3",
                            "1-2-xyzxyzxy", "1-2-abc", "0-5-90b22de2", "99999999999-1-90b22de2"}) {
    EXPECT_FALSE(ParseJobId(other).has_value()) << other;
  }
}

TEST_F(JobsTest, LivenessNeedsProofOfDeath) {
  Env* env = Env::Default();
  proc_.Add(710, 60, {"/usr/bin/python3", "train.py"}, "python3", 5000);
  EXPECT_EQ(ProcessLiveness(env, proc_.root(), 710, 5000), Liveness::kAlive);
  // Another process with that pid: the one we knew is gone.
  EXPECT_EQ(ProcessLiveness(env, proc_.root(), 710, 4999), Liveness::kGone);
  // A stat that cannot be read (here: not a file) proves nothing.
  std::filesystem::remove(proc_.PidDir(710) + "/stat");
  std::filesystem::create_directories(proc_.PidDir(710) + "/stat");
  EXPECT_EQ(ProcessLiveness(env, proc_.root(), 710, 5000), Liveness::kUnknown);
  std::filesystem::remove(proc_.PidDir(710) + "/stat");
  EXPECT_EQ(ProcessLiveness(env, proc_.root(), 710, 5000), Liveness::kUnknown);  // dir still there
  WriteFile(proc_.PidDir(710) + "/stat", "garbage without a paren");
  EXPECT_EQ(ProcessLiveness(env, proc_.root(), 710, 5000), Liveness::kUnknown);
  proc_.Add(710, 60, {"/usr/bin/python3", "train.py"}, "python3", 5000, 'Z');
  EXPECT_EQ(ProcessLiveness(env, proc_.root(), 710, 5000), Liveness::kGone);  // a zombie
  std::filesystem::remove_all(proc_.PidDir(710));
  EXPECT_EQ(ProcessLiveness(env, proc_.root(), 710, 5000), Liveness::kGone);
}

// Issue 13 B: a job that crashed at start-up, between two passes, is judged
// from the snapshot taken when it exec'd, by the same rules.
TEST_F(JobsTest, ADepartedProcessIsJudgedFromItsSnapshot) {
  proc_.Add(720, 60, {"/usr/bin/python3", "train.py", "config/train_gpt2.py"}, "python3", 6000);
  proc_.Environ(720, {"CUDA_VISIBLE_DEVICES=0"});
  std::string out = dir_.Join("train.log");
  WriteFile(out, "Traceback (most recent call last):\n");
  proc_.AddFd(720, 1, out, testing::kWriteAppend);
  proc_.AddFd(720, 2, "pipe:[77]");
  // Not a job: a departed shell is still no job.
  proc_.Add(721, 60, {"/usr/bin/python3", "manage.py", "runserver"}, "python3", 6001);
  Env* env = Env::Default();
  auto snap = CaptureProcess(env, proc_.root(), 720);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->start_ticks, 6000u);
  EXPECT_EQ(snap->stdout_path, out);
  EXPECT_EQ(snap->stderr_path, "");  // a pipe is no file to tail
  auto other = CaptureProcess(env, proc_.root(), 721);
  ASSERT_TRUE(other.ok());
  auto live = Detect();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_FALSE(live[0].processes[0].departed);

  std::filesystem::remove_all(proc_.PidDir(720));
  std::filesystem::remove_all(proc_.PidDir(721));
  EXPECT_TRUE(Detect().empty());
  JobDetectionOptions o;
  o.proc_root = proc_.root();
  o.self_pid = 99999;
  o.departed = {*snap, *other};
  auto jobs = DetectJobs(o);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  const DetectedJob& j = (*jobs)[0];
  EXPECT_EQ(j.id, live[0].id);  // the same job, alive or departed
  EXPECT_EQ(j.name, "train");
  EXPECT_EQ(j.trainer, "nanogpt-style");
  ASSERT_EQ(j.processes.size(), 1u);
  EXPECT_TRUE(j.processes[0].departed);
  EXPECT_EQ(j.processes[0].ppid, 60);

  // Gone or a zombie: nothing to keep.
  EXPECT_EQ(CaptureProcess(env, proc_.root(), 720).status().code(), StatusCode::kNotFound);
  proc_.Add(722, 60, {"/usr/bin/python3", "x.py"}, "python3", 6002, 'Z');
  EXPECT_FALSE(CaptureProcess(env, proc_.root(), 722).ok());
}

TEST_F(JobsTest, DeepSpeedRunnerLaunchAndRanks) {
  proc_.Add(400, 60,
            {"/usr/bin/python3", "/usr/local/bin/deepspeed", "--num_gpus", "2",
             "Megatron-LM/pretrain_gpt.py", "--deepspeed_config", "ds.json"},
            "deepspeed", 3000);
  proc_.Add(401, 400,
            {"/usr/bin/python3", "-u", "-m", "deepspeed.launcher.launch", "--world_info=eyJsb2Nh",
             "--master_addr=127.0.0.1", "--master_port=29500", "Megatron-LM/pretrain_gpt.py",
             "--deepspeed_config", "ds.json"},
            "python3", 3005);
  for (int r = 0; r < 2; ++r) {
    proc_.Framework(402 + r, 401,
                    {"/usr/bin/python3", "-u", "Megatron-LM/pretrain_gpt.py",
                     "--local_rank=" + std::to_string(r), "--deepspeed_config", "ds.json"},
                    kTorch, RankEnv(r, 2), 3010);
  }
  auto jobs = Detect();
  ASSERT_EQ(jobs.size(), 1u);
  const DetectedJob& j = jobs[0];
  EXPECT_EQ(j.launcher, "deepspeed");
  EXPECT_EQ(j.trainer, "megatron");
  EXPECT_EQ(j.name, "pretrain_gpt");
  EXPECT_EQ(j.kind, JobKind::kTraining);
  EXPECT_EQ(j.world_size, 2);
  EXPECT_EQ(j.id, Id(400, 3000));
  EXPECT_EQ(Pids(j, JobProcessRole::kLauncher), (std::vector<int>{400, 401}));
  EXPECT_EQ(Pids(j, JobProcessRole::kRank), (std::vector<int>{402, 403}));
}

TEST_F(JobsTest, TwoIndependentSingleProcessTrainingsAreTwoJobs) {
  proc_.Framework(500, 60, {"python", "train_resnet.py", "--epochs", "90"}, kTorch, {}, 4000);
  proc_.Framework(510, 511, {"python3", "finetune.py"}, kJax, {}, 3500);  // parent not in /proc
  auto jobs = Detect();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].id, Id(510, 3500));  // by start time
  EXPECT_EQ(jobs[0].framework, Framework::kJax);
  EXPECT_EQ(jobs[0].name, "finetune");
  EXPECT_EQ(jobs[1].id, Id(500, 4000));
  EXPECT_EQ(jobs[1].framework, Framework::kPyTorch);
  EXPECT_EQ(jobs[1].name, "train_resnet");
  for (const DetectedJob& j : jobs) {
    EXPECT_EQ(j.launcher, "");
    EXPECT_EQ(j.world_size, 1);
    EXPECT_EQ(j.kind, JobKind::kTraining);  // by name: "train", "finetune"
    ASSERT_EQ(j.processes.size(), 1u);
    EXPECT_EQ(j.processes[0].role, JobProcessRole::kRank);
    EXPECT_EQ(j.processes[0].rank, -1);
  }
}

TEST_F(JobsTest, MpirunJobAndAnMpiProgramThatIsNoJob) {
  proc_.Add(700, 60, {"mpirun", "-np", "2", "python", "train.py"}, "mpirun", 5000);
  for (int r = 0; r < 2; ++r) {
    proc_.Framework(701 + r, 700, {"python", "train.py"}, kTensorFlow,
                    {"OMPI_COMM_WORLD_RANK=" + std::to_string(r), "OMPI_COMM_WORLD_SIZE=2",
                     "OMPI_COMM_WORLD_LOCAL_RANK=" + std::to_string(r)},
                    5010);
  }
  // An MPI program with no framework and no GPU runtime.
  proc_.Add(800, 60, {"mpiexec", "-n", "2", "./hello"}, "mpiexec", 5100);
  for (int r = 0; r < 2; ++r) {
    proc_.Add(801 + r, 800, {"./hello"}, "hello", 5110);
    proc_.Maps(801 + r, kBase);
    proc_.Environ(801 + r, {"PMI_RANK=" + std::to_string(r), "PMI_SIZE=2"});
  }
  // An MPI program on the GPU without a framework is a job (CUDA + a rank).
  proc_.Add(900, 60, {"mpirun", "-np", "1", "./nbody", "-benchmark"}, "mpirun", 5200);
  proc_.Add(901, 900, {"./nbody", "-benchmark"}, "nbody", 5210);
  proc_.Maps(901, Libs(kBase, kCudaOnly));
  proc_.Environ(901, {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=1"});

  auto jobs = Detect();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].launcher, "mpirun");
  EXPECT_EQ(jobs[0].framework, Framework::kTensorFlow);
  EXPECT_EQ(jobs[0].world_size, 2);
  EXPECT_EQ(jobs[0].name, "train");
  EXPECT_EQ(Pids(jobs[0], JobProcessRole::kRank), (std::vector<int>{701, 702}));
  EXPECT_EQ(jobs[0].processes[2].rank, 1);
  EXPECT_EQ(jobs[0].processes[2].local_rank, 1);
  EXPECT_EQ(jobs[1].name, "nbody");
  EXPECT_EQ(jobs[1].framework, Framework::kUnknown);
  EXPECT_EQ(jobs[1].launcher, "mpirun");
}

TEST_F(JobsTest, InferenceServers) {
  proc_.Framework(1000, 60,
                  {"/usr/bin/python3", "-m", "vllm.entrypoints.openai.api_server", "--model",
                   "meta-llama/Llama-3-8B"},
                  kTorch, {}, 6000);
  // vLLM's engine process: a child with the same libraries, a helper.
  proc_.Framework(1001, 1000, {"VLLM::EngineCore"}, kTorch, {}, 6010);
  proc_.Framework(1100, 60, {"/usr/bin/python3", "/usr/local/bin/vllm", "serve", "Qwen/Qwen2-7B"},
                  kTorch, {}, 6100);
  proc_.Add(1200, 60, {"/opt/tritonserver/bin/tritonserver", "--model-repository=/models"},
            "tritonserver", 6200);
  proc_.Add(1300, 1, {"/usr/local/bin/ollama", "serve"}, "ollama", 6300);
  proc_.Add(1301, 1300, {"/usr/local/bin/ollama", "runner", "--model", "/m/blob", "--port", "1"},
            "ollama", 6310);
  proc_.Add(1400, 60, {"ollama", "run", "llama3"}, "ollama", 6400);  // the client: no job
  proc_.Add(1500, 60, {"text-generation-launcher", "--model-id", "bigscience/bloom-560m"},
            "text-generation", 6500);
  proc_.Framework(1501, 1500,
                  {"/opt/conda/bin/python3.11", "/opt/conda/bin/text-generation-server", "serve",
                   "bigscience/bloom-560m"},
                  kTorch, {"RANK=0", "WORLD_SIZE=1"}, 6510);
  proc_.Framework(1600, 60, {"python3", "-m", "sglang.launch_server", "--model-path", "m"}, kTorch,
                  {}, 6600);

  auto jobs = Detect();
  ASSERT_EQ(jobs.size(), 6u);
  std::vector<std::string> trainers;
  for (const DetectedJob& j : jobs) {
    trainers.push_back(j.trainer);
    EXPECT_EQ(j.kind, JobKind::kInference) << j.trainer;
  }
  EXPECT_EQ(trainers,
            (std::vector<std::string>{"vllm", "vllm", "triton", "ollama", "tgi", "sglang"}));
  EXPECT_EQ(jobs[0].framework, Framework::kPyTorch);
  EXPECT_EQ(Pids(jobs[0], JobProcessRole::kHelper), (std::vector<int>{1001}));
  EXPECT_EQ(jobs[1].name, "vllm");
  EXPECT_EQ(jobs[2].name, "tritonserver");
  EXPECT_EQ(jobs[3].processes.size(), 2u);  // serve + runner
  EXPECT_EQ(jobs[4].framework, Framework::kPyTorch);
  EXPECT_EQ(Pids(jobs[4], JobProcessRole::kRank), (std::vector<int>{1500, 1501}));
}

TEST_F(JobsTest, DockerContainedJobCarriesItsContainerId) {
  proc_.Add(1700, 1, {"/usr/bin/containerd-shim-runc-v2", "-namespace", "moby", "-id", kCid},
            "containerd-shim", 7000);
  proc_.Framework(1701, 1700, {"python", "/workspace/train.py"}, kTorch, {}, 7010);
  proc_.Cgroup(1701, "0::/system.slice/docker-" + kCid + ".scope\n");
  auto jobs = Detect();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].container_id, kCid);
  EXPECT_EQ(jobs[0].name, "train");
}

TEST(ContainerIdTest, CgroupForms) {
  const std::string id = kCid;
  EXPECT_EQ(ContainerIdFromCgroup("0::/system.slice/docker-" + id + ".scope\n"), id);
  EXPECT_EQ(ContainerIdFromCgroup("12:pids:/docker/" + id + "\n11:cpu,cpuacct:/docker/" + id), id);
  EXPECT_EQ(ContainerIdFromCgroup("0::/kubepods.slice/kubepods-burstable.slice/"
                                  "kubepods-burstable-pod1234_5678.slice/cri-containerd-" +
                                  id + ".scope"),
            id);
  EXPECT_EQ(ContainerIdFromCgroup("4:memory:/kubepods/burstable/pod0f1e2d3c-aaaa-bbbb/" + id), id);
  EXPECT_EQ(ContainerIdFromCgroup("0::/kubepods.slice/crio-" + id + ".scope"), id);
  EXPECT_EQ(ContainerIdFromCgroup("0::/user.slice/user-1000.slice/user@1000.service/"
                                  "user.slice/libpod-" +
                                  id + ".scope/container"),
            id);
  // podman's monitor is not the container.
  EXPECT_EQ(ContainerIdFromCgroup("0::/machine.slice/libpod-conmon-" + id + ".scope"), "");
  // Docker in docker: the innermost.
  std::string inner(64, 'a');
  EXPECT_EQ(ContainerIdFromCgroup("0::/docker/" + id + "/docker/" + inner), inner);
  // Upper-case hex is folded.
  std::string upper(64, 'B');
  EXPECT_EQ(ContainerIdFromCgroup("0::/docker/" + upper), std::string(64, 'b'));
  // Host processes, and junk.
  EXPECT_EQ(ContainerIdFromCgroup("0::/user.slice/user-1000.slice/session-3.scope\n"), "");
  EXPECT_EQ(ContainerIdFromCgroup("0::/\n"), "");
  EXPECT_EQ(ContainerIdFromCgroup(""), "");
  EXPECT_EQ(ContainerIdFromCgroup("no colons here/" + id), "");
  EXPECT_EQ(ContainerIdFromCgroup("0::/docker/" + id.substr(0, 63) + "g"), "");
}

TEST(MapsEvidenceTest, FrameworksByLibrary) {
  auto from = [](const std::vector<std::string>& libs) {
    std::string text;
    for (const std::string& l : libs) text += "7f00-7f01 r-xp 00000000 08:01 42   " + l + "\n";
    return EvidenceFromMaps(text);
  };
  EXPECT_EQ(from(kBase).framework, Framework::kUnknown);
  EXPECT_FALSE(from(kBase).gpu_runtime);
  EXPECT_EQ(from(kTorch).framework, Framework::kPyTorch);
  EXPECT_TRUE(from(kTorch).gpu_runtime);
  EXPECT_EQ(from(kTensorFlow).framework, Framework::kTensorFlow);
  EXPECT_EQ(from(kJax).framework, Framework::kJax);
  EXPECT_EQ(from({"/v/site-packages/jaxlib/cpu_feature_guard.so"}).framework, Framework::kJax);
  EXPECT_EQ(from({"/v/site-packages/paddle/base/libpaddle.so"}).framework, Framework::kPaddle);
  EXPECT_EQ(from({"/v/site-packages/mindspore/lib/libmindspore_backend.so"}).framework,
            Framework::kMindSpore);
  EXPECT_EQ(
      from({"/v/site-packages/mindspore/_c_expression.cpython-39-x86_64-linux-gnu.so"}).framework,
      Framework::kMindSpore);
  // PyTorch scripts import TensorFlow for TensorBoard; the job is still PyTorch.
  EXPECT_EQ(from(Libs(kTensorFlow, kTorch)).framework, Framework::kPyTorch);
  EXPECT_EQ(from(Libs(kTensorFlow, kJax)).framework, Framework::kJax);
  EXPECT_TRUE(from(kCudaOnly).gpu_runtime);
  EXPECT_EQ(from({"/v/site-packages/vllm/_C.abi3.so"}).trainer, "vllm");
  EXPECT_EQ(from({"/opt/tritonserver/lib/libtritonserver.so"}).trainer, "triton");
  EXPECT_EQ(from({"/v/site-packages/mmcv/_ext.cpython-310-x86_64-linux-gnu.so"}).trainer,
            "mmengine");
  // A data file named like a library, or a deleted one, still counts only by name.
  EXPECT_EQ(from({"/home/u/libtorch_cpu.txt"}).framework, Framework::kUnknown);
  EXPECT_EQ(EvidenceFromMaps("").framework, Framework::kUnknown);
  EXPECT_EQ(EvidenceFromMaps(std::string("\0\0/\n/\n//\n\xff\xfe", 11)).framework,
            Framework::kUnknown);
}

TEST_F(JobsTest, OrdinaryProcessesAreNoJobs) {
  proc_.Add(1800, 60, {"python", "manage.py", "runserver", "0.0.0.0:8000"}, "python", 8000);
  proc_.Maps(1800, kBase);
  proc_.Environ(1800, {"DJANGO_SETTINGS_MODULE=site.settings"});
  proc_.Add(1801, 60, {"node", "server.js"}, "node", 8000);
  proc_.Maps(1801, kBase);
  proc_.Add(1802, 60, {"bash", "train.sh"}, "bash", 8000);
  proc_.Environ(1802, RankEnv(0, 1));  // a rank environment alone is not enough
  // TensorBoard imports TensorFlow when it is installed; it is not a job.
  proc_.Framework(1803, 60, {"/usr/bin/python3", "/usr/local/bin/tensorboard", "--logdir", "runs"},
                  kTensorFlow, {}, 8000, "tensorboard");
  // A CUDA program with neither a rank nor a launcher: not evidence enough.
  proc_.Add(1804, 60, {"./deviceQuery"}, "deviceQuery", 8000);
  proc_.Maps(1804, Libs(kBase, kCudaOnly));
  // An MPI launcher whose ranks show nothing, and a bare srun.
  proc_.Add(1805, 60, {"srun", "-N", "2", "hostname"}, "srun", 8000);
  EXPECT_TRUE(Detect().empty());
}

// NVML's compute process list is evidence of its own: a trainer in C++ (or
// Julia, or a static binary) that maps nothing Vigil knows is a job while it
// runs CUDA work; TensorBoard is still not one, and the same program off the
// GPU is not one either.
TEST_F(JobsTest, ProcessesRunningCudaWorkAreJobs) {
  proc_.Add(1900, 60, {"/opt/sim/bin/solver", "--config", "big.yaml"}, "solver", 9000);
  proc_.Maps(1900, Libs(kBase, kCudaOnly));
  proc_.Add(1901, 1900, {"/opt/sim/bin/solver", "--worker"}, "solver", 9001);  // its helper
  proc_.Maps(1901, kBase);
  proc_.Framework(1903, 60, {"/usr/bin/python3", "/usr/local/bin/tensorboard", "--logdir", "runs"},
                  kTensorFlow, {}, 9000, "tensorboard");
  EXPECT_TRUE(Detect({}).empty());
  auto jobs = Detect({1900, 1903});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].name, "solver");
  EXPECT_EQ(jobs[0].kind, JobKind::kUnknown);
  EXPECT_EQ(Pids(jobs[0], JobProcessRole::kRank), std::vector<int>({1900}));
}

TEST_F(JobsTest, UnreadableEnvironAndMapsFallBackToWhatCanBeSeen) {
  // Ranks whose environ is unreadable: grouped by the tree, ranked by nothing.
  proc_.Add(1900, 60, {"torchrun", "--nproc_per_node=2", "train.py"}, "torchrun", 9000);
  for (int i = 0; i < 2; ++i) {
    proc_.Add(1901 + i, 1900, {"/usr/bin/python3", "-u", "train.py"}, "python3", 9010);
    proc_.Maps(1901 + i, Libs(kBase, kTorch));
  }
  // Ranks whose maps are unreadable too (another user's, seen by a non-root
  // agent): torchrun's children are its ranks all the same.
  proc_.Add(2000, 60, {"python3", "-m", "torch.distributed.run", "--nproc_per_node=2", "eval.py"},
            "python3", 9100);
  for (int i = 0; i < 2; ++i) {
    proc_.Add(2001 + i, 2000, {"/usr/bin/python3", "-u", "eval.py"}, "python3", 9110);
  }
  // A lone nanoGPT run with nothing readable but its cmdline.
  proc_.Add(2100, 60, {"python", "train.py", "config/train_shakespeare_char.py"}, "python", 9200);

  auto jobs = Detect();
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].launcher, "torchrun");
  EXPECT_EQ(jobs[0].framework, Framework::kPyTorch);
  EXPECT_EQ(jobs[0].world_size, 2);  // ranks seen
  EXPECT_EQ(Pids(jobs[0], JobProcessRole::kRank), (std::vector<int>{1901, 1902}));
  EXPECT_EQ(jobs[0].processes[1].rank, -1);
  EXPECT_EQ(jobs[0].master_port, 0);
  EXPECT_EQ(jobs[1].name, "eval");
  EXPECT_EQ(jobs[1].framework, Framework::kPyTorch);
  EXPECT_EQ(jobs[1].kind, JobKind::kTraining);  // launched by torchrun
  EXPECT_EQ(Pids(jobs[1], JobProcessRole::kRank), (std::vector<int>{2001, 2002}));
  EXPECT_EQ(jobs[2].trainer, "nanogpt-style");
  EXPECT_EQ(jobs[2].framework, Framework::kPyTorch);
  EXPECT_EQ(jobs[2].name, "train");
}

TEST_F(JobsTest, LightningSpawnsRanksWithTheSameCommandLine) {
  // Lightning's DDP launcher re-runs the script with LOCAL_RANK set: same
  // cmdline as its parent, but a rank, not a DataLoader worker.
  std::vector<std::string> argv = {"python", "fit.py", "--trainer.devices=2"};
  proc_.Framework(2200, 60, argv, kTorch, {"PL_GLOBAL_SEED=42"}, 9300);
  proc_.Framework(2201, 2200, argv, kTorch,
                  {"PL_GLOBAL_SEED=42", "LOCAL_RANK=1", "NODE_RANK=0", "WORLD_SIZE=2"}, 9310);
  proc_.Framework(2202, 2200, argv, kTorch, {"PL_GLOBAL_SEED=42"}, 9320, "pt_data_worker");
  proc_.Framework(2203, 2201, argv, kTorch,
                  {"PL_GLOBAL_SEED=42", "LOCAL_RANK=1", "NODE_RANK=0", "WORLD_SIZE=2"}, 9330,
                  "pt_data_worker");
  auto jobs = Detect();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].trainer, "lightning");
  EXPECT_EQ(jobs[0].world_size, 2);
  EXPECT_EQ(jobs[0].kind, JobKind::kTraining);
  EXPECT_EQ(Pids(jobs[0], JobProcessRole::kRank), (std::vector<int>{2200, 2201}));
  EXPECT_EQ(Pids(jobs[0], JobProcessRole::kHelper), (std::vector<int>{2202, 2203}));
  EXPECT_EQ(jobs[0].processes[1].local_rank, 1);
  EXPECT_EQ(jobs[0].id, Id(2200, 9300));
}

TEST_F(JobsTest, RanksWithoutALauncherGroupByRendezvous) {
  // "for i in 0 1; do RANK=$i ... python train.py & done" from one shell.
  for (int r = 0; r < 2; ++r) {
    proc_.Framework(2300 + r, 60, {"python", "ddp.py"}, kTorch, RankEnv(r, 2, 29600), 9400 + r);
  }
  proc_.Framework(2310, 60, {"python", "ddp.py"}, kTorch, RankEnv(0, 1, 29700), 9450);
  auto jobs = Detect();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(Pids(jobs[0], JobProcessRole::kRank), (std::vector<int>{2300, 2301}));
  EXPECT_EQ(jobs[0].id, Id(2300, 9400));
  EXPECT_EQ(jobs[0].master_port, 29600);
  EXPECT_EQ(jobs[0].launcher, "torchrun");  // TORCHELASTIC_RUN_ID says who started them
  EXPECT_EQ(jobs[0].kind, JobKind::kTraining);
  EXPECT_EQ(Pids(jobs[1], JobProcessRole::kRank), (std::vector<int>{2310}));
}

TEST_F(JobsTest, VigilRunNameWins) {
  proc_.Add(2400, 60,
            {"/usr/local/bin/vigil", "run", "--name", "bert-sweep-3", "--", "python", "train.py"},
            "vigil", 9500);
  proc_.Framework(2401, 2400, {"python", "train.py"}, kTorch, {}, 9501);
  proc_.Add(2500, 60, {"/usr/local/bin/vigil", "run", "--", "python", "eval_lm.py"}, "vigil", 9600);
  proc_.Framework(2501, 2500, {"python", "eval_lm.py"}, kTorch, {}, 9601);
  auto jobs = Detect();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].name, "bert-sweep-3");
  EXPECT_EQ(jobs[0].processes.size(), 1u);  // vigil run itself is no part of the job
  EXPECT_EQ(jobs[1].name, "eval_lm");
  EXPECT_EQ(jobs[1].kind, JobKind::kUnknown);
}

TEST_F(JobsTest, SlurmStepAndRayWorkers) {
  proc_.Add(2600, 1, {"slurmstepd: [4242.0]"}, "slurmstepd", 9700);
  for (int r = 0; r < 2; ++r) {
    proc_.Framework(2601 + r, 2600, {"python", "train.py"}, kTorch,
                    {"SLURM_JOB_ID=4242", "SLURM_STEP_ID=0", "SLURM_PROCID=" + std::to_string(r),
                     "SLURM_LOCALID=" + std::to_string(r), "SLURM_NTASKS=8"},
                    9710);
  }
  proc_.Add(2700, 1, {"/opt/ray/core/src/ray/raylet/raylet", "--raylet_socket_name=/tmp/s"},
            "raylet", 9800);
  proc_.Framework(2701, 2700, {"ray::RayTrainWorker.__execute"}, kTorch, {"RAY_JOB_ID=02000000"},
                  9810);
  proc_.Framework(2702, 2700, {"ray::RayTrainWorker.__execute"}, kTorch, {"RAY_JOB_ID=02000000"},
                  9811);
  proc_.Framework(2703, 2700, {"ray::IDLE"}, {}, {"RAY_JOB_ID=03000000"}, 9812);
  auto jobs = Detect();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].launcher, "srun");
  EXPECT_EQ(jobs[0].world_size, 8);
  EXPECT_EQ(jobs[0].processes[0].pid, 2600);
  EXPECT_EQ(jobs[0].name, "train");
  EXPECT_EQ(jobs[1].launcher, "ray");
  EXPECT_EQ(jobs[1].id, Id(2700, 9800) + "-02000000");
  EXPECT_EQ(Pids(jobs[1], JobProcessRole::kRank), (std::vector<int>{2701, 2702}));
  EXPECT_EQ(jobs[1].processes.size(), 2u);  // the node's raylet is no part of one job
}

TEST_F(JobsTest, RunsStartedByHandInALaunchersShellAreSeparateJobs) {
  // "srun --pty bash", then two trainings by hand: the step is no job of its own.
  proc_.Add(3100, 1, {"slurmstepd: [77.0]"}, "slurmstepd", 9950);
  proc_.Add(3101, 3100, {"/bin/bash", "--norc", "-i"}, "bash", 9951);
  std::vector<std::string> env = {"SLURM_JOB_ID=77", "SLURM_STEP_ID=0", "SLURM_PROCID=0"};
  proc_.Framework(3102, 3101, {"python", "a.py"}, kTorch, env, 9960);
  proc_.Framework(3103, 3101, {"python", "b.py"}, kTorch, env, 9970);
  // "srun bash run.sh" runs one task per rank: those stay the step's.
  proc_.Add(3200, 1, {"slurmstepd: [78.0]"}, "slurmstepd", 9980);
  proc_.Add(3201, 3200, {"/bin/bash", "run.sh"}, "bash", 9981);
  proc_.Framework(3202, 3201, {"python", "c.py"}, kTorch, env, 9990);
  auto jobs = Detect();
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(Pids(jobs[0], JobProcessRole::kRank), (std::vector<int>{3102}));
  EXPECT_EQ(Pids(jobs[0], JobProcessRole::kLauncher), (std::vector<int>{}));
  EXPECT_EQ(jobs[0].launcher, "srun");  // from its environment
  EXPECT_EQ(Pids(jobs[1], JobProcessRole::kRank), (std::vector<int>{3103}));
  EXPECT_EQ(Pids(jobs[2], JobProcessRole::kLauncher), (std::vector<int>{3200}));
  EXPECT_EQ(Pids(jobs[2], JobProcessRole::kRank), (std::vector<int>{3202}));
}

TEST_F(JobsTest, WrapperScriptsBetweenLauncherAndRanksAreNotRanks) {
  // "torchrun --no-python bash run.sh": each rank is a shell running python.
  proc_.Add(3300, 60, {"torchrun", "--no-python", "--nproc_per_node=2", "bash", "run.sh"},
            "torchrun", 9990);
  for (int r = 0; r < 2; ++r) {
    proc_.Add(3301 + r, 3300, {"bash", "run.sh"}, "bash", 9991);
    proc_.Environ(3301 + r, RankEnv(r, 2));
    proc_.Framework(3311 + r, 3301 + r, {"python", "train.py"}, kTorch, RankEnv(r, 2), 9992);
  }
  auto jobs = Detect();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(Pids(jobs[0], JobProcessRole::kLauncher), (std::vector<int>{3300}));
  EXPECT_EQ(Pids(jobs[0], JobProcessRole::kRank), (std::vector<int>{3311, 3312}));
  EXPECT_EQ(jobs[0].processes[2].rank, 1);
  EXPECT_EQ(jobs[0].world_size, 2);
  EXPECT_EQ(jobs[0].name, "run");  // what the user launched, as the logs' job label says
  EXPECT_EQ(jobs[0].framework, Framework::kPyTorch);
}

TEST_F(JobsTest, TorchrunBeforeItsRanksStartIsAJob) {
  proc_.Add(2800, 60, {"torchrun", "--standalone", "--nproc_per_node=8", "train.py"}, "torchrun",
            9900);
  auto jobs = Detect();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].launcher, "torchrun");
  EXPECT_EQ(jobs[0].framework, Framework::kPyTorch);
  EXPECT_EQ(jobs[0].world_size, 0);
  EXPECT_EQ(jobs[0].name, "train");
  ASSERT_EQ(jobs[0].processes.size(), 1u);
  EXPECT_EQ(jobs[0].processes[0].role, JobProcessRole::kLauncher);
}

TEST_F(JobsTest, SelfZombiesAndKernelThreadsAreSkipped) {
  proc_.Framework(99999, 60, {"python", "train.py"}, kTorch);  // self_pid in Detect()
  proc_.Framework(2900, 60, {"python", "train.py"}, kTorch);
  proc_.Add(2900, 60, {"python", "train.py"}, "python", 1000, 'Z');
  proc_.Add(3, 2, {}, "kworker/0:0");
  EXPECT_TRUE(Detect().empty());
}

TEST_F(JobsTest, OddProcContentNeverCrashes) {
  const std::string root = proc_.root();
  // Garbage stat files, a directory with nothing in it, a non-pid name.
  WriteFile(root + "/3000/stat", "garbage");
  WriteFile(root + "/3000/cmdline", std::string("python\0train.py\0", 16));
  WriteFile(root + "/3001/stat", "3001 (x) S");
  std::filesystem::create_directories(root + "/3002");
  WriteFile(root + "/self/stat", "1 (x) S 0");
  WriteFile(root + "/+3003/stat", "1 (x) S 0");
  // A ppid loop (a racing or fake /proc), both mapping PyTorch.
  proc_.Framework(3010, 3011, {"python", "a.py"}, kTorch);
  proc_.Framework(3011, 3010, {"python", "a.py"}, kTorch);
  // A process that is its own parent.
  proc_.Framework(3012, 3012, {"python", "b.py"}, kTorch);
  // A huge cmdline and binary junk everywhere else.
  std::string huge = "python";
  huge.push_back('\0');
  for (int i = 0; i < 20000; ++i) huge += "--flag=\x01\xff\xfe";
  proc_.Framework(3020, 60, {"python", "x.py"}, kTorch);
  WriteFile(proc_.PidDir(3020) + "/cmdline", huge);
  std::string junk;
  for (int i = 0; i < 100000; ++i) junk.push_back(static_cast<char>((i * 7919) & 0xff));
  proc_.Add(3030, 60, {"python", "y.py"}, "python");
  WriteFile(proc_.PidDir(3030) + "/maps", junk);
  WriteFile(proc_.PidDir(3030) + "/environ", junk);
  WriteFile(proc_.PidDir(3030) + "/cgroup", junk);
  proc_.Framework(3040, 60, {"python", "z.py"}, kTorch,
                  {"RANK=-3", "WORLD_SIZE=99999999999999999999", "MASTER_PORT=70000",
                   "LOCAL_RANK=abc", "=", "NOEQUALS"});
  WriteFile(proc_.PidDir(3040) + "/cgroup", "::::\n0::\n:\n");
  WriteFile(root + "/stat", "btime not-a-number\n");

  JobDetectionOptions o;
  o.proc_root = root;
  auto r = DetectJobs(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  size_t processes = 0;
  for (const DetectedJob& j : *r) {
    processes += j.processes.size();
    for (const JobProcess& p : j.processes) EXPECT_LE(p.cmdline.size(), 4096u);
    EXPECT_GE(j.world_size, 0);
    EXPECT_GE(j.master_port, 0);
    EXPECT_FALSE(j.id.empty());
  }
  EXPECT_EQ(processes, 5u);  // 3010, 3011, 3012, 3020, 3040

  o.proc_root = dir_.Join("no-such-proc");
  auto missing = DetectJobs(o);
  EXPECT_FALSE(missing.ok());
}

// Detection over the real /proc until it lists a job anchored at `pid` (a
// child just spawned), for about 2 s at most; the last pass's jobs in `jobs`.
std::optional<DetectedJob> DetectRealJob(pid_t pid, std::vector<DetectedJob>* jobs) {
  for (int attempt = 0; attempt < 200; ++attempt) {
    auto r = DetectJobs(JobDetectionOptions{});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return std::nullopt;
    *jobs = std::move(*r);
    for (const DetectedJob& j : *jobs) {
      if (!j.processes.empty() && j.processes[0].pid == pid) return j;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

// A real child that looks like torchrun (argv[0] says so) is found in the real
// /proc, with a start time that agrees with the wall clock; whatever else runs
// on this machine is detected as well-formed jobs (VIGIL_DISCOVER_PRINT=1
// prints them).
TEST(RealProcTest, FindsARealLauncherChild) {
  const char* sleep_path = std::filesystem::exists("/bin/sleep") ? "/bin/sleep" : "/usr/bin/sleep";
  char arg0[] = "torchrun";
  char arg1[] = "30";  // sleep's argument, and all torchrun shows
  char* argv[] = {arg0, arg1, nullptr};
  int64_t before_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  pid_t pid = 0;
  ASSERT_EQ(::posix_spawn(&pid, sleep_path, nullptr, nullptr, argv, environ), 0);
  std::vector<DetectedJob> jobs;
  std::optional<DetectedJob> found = DetectRealJob(pid, &jobs);
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  for (const DetectedJob& j : jobs) {
    EXPECT_FALSE(j.id.empty());
    EXPECT_FALSE(j.processes.empty());
    if (std::getenv("VIGIL_DISCOVER_PRINT") != nullptr) {
      std::printf("job %s name=%s kind=%s framework=%s launcher=%s trainer=%s ranks=%d procs=%zu\n",
                  j.id.c_str(), j.name.c_str(), JobKindName(j.kind), FrameworkName(j.framework),
                  j.launcher.c_str(), j.trainer.c_str(), j.world_size, j.processes.size());
    }
  }
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->launcher, "torchrun");
  EXPECT_EQ(found->processes[0].role, JobProcessRole::kLauncher);
  EXPECT_EQ(found->processes[0].ppid, static_cast<int>(::getpid()));
  EXPECT_EQ(found->processes[0].cmdline, "torchrun 30");
  // Clock ticks are 10 ms and btime is whole seconds.
  EXPECT_GT(found->start_time_ms, before_ms - 2000);
  EXPECT_LT(found->start_time_ms, before_ms + 60000);
  // The id: its pid, the start ticks of its stat, this boot.
  std::optional<JobIdParts> parts = ParseJobId(found->id);
  ASSERT_TRUE(parts.has_value()) << found->id;
  EXPECT_EQ(parts->pid, pid);
  EXPECT_EQ(parts->start_ticks, found->processes[0].start_ticks);
  EXPECT_EQ(parts->boot, ReadBootId(Env::Default(), "/proc"));
  EXPECT_NE(parts->boot, "00000000");
}

}  // namespace
}  // namespace vigil::discover

namespace vigil::discover {
namespace {

// A snapshot keeps the libraries' paths only, which say what the maps say.
TEST_F(JobsTest, CompactMapsKeepTheEvidence) {
  proc_.Framework(810, 60, {"/usr/bin/python3", "t.py"}, Libs(kTorch, kTensorFlow));
  auto maps = Env::Default()->ReadFile(proc_.PidDir(810) + "/maps", 1 << 20);
  ASSERT_TRUE(maps.ok());
  std::string compact = CompactMaps(*maps);
  EXPECT_LT(compact.size(), maps->size() / 2);
  EXPECT_EQ(compact.find("[heap]"), std::string::npos);
  EXPECT_EQ(compact.find("/usr/bin/python3.11"), std::string::npos);  // not a library
  EXPECT_NE(compact.find("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so\n"),
            std::string::npos);
  EXPECT_EQ(EvidenceFromMaps(compact), EvidenceFromMaps(*maps));
  // Bounded, whatever the process maps.
  std::string many;
  for (int i = 0; i < 5000; ++i) {
    many += "7f00-7f01 r-xp 0 08:01 1 /opt/lib" + std::to_string(i) + "/libx.so\n";
  }
  EXPECT_LE(CompactMaps(many).size(), kMaxSnapshotMapsBytes);
}

TEST_F(JobsTest, CheapFirstLooksFollowTheDetectionRules) {
  auto raw = [](std::vector<std::string> argv) {
    std::string s;
    for (const std::string& a : argv) s += a + '\0';
    return s;
  };
  EXPECT_TRUE(NeverAJobProgram(raw({"/bin/bash", "-c", "ls"})));
  EXPECT_TRUE(NeverAJobProgram(raw({"tail", "-f", "x.log"})));
  EXPECT_TRUE(NeverAJobProgram(raw({"/usr/local/bin/vigil", "up"})));
  EXPECT_TRUE(NeverAJobProgram(""));
  EXPECT_TRUE(NeverAJobProgram(raw({"/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus", "-quiet"})));
  EXPECT_TRUE(NeverAJobProgram(raw({"git", "status"})));
  EXPECT_FALSE(NeverAJobProgram(raw({"/usr/bin/python3", "train.py"})));
  EXPECT_FALSE(NeverAJobProgram(raw({"torchrun", "train.py"})));

  Env* env = Env::Default();
  auto snap = [&](int pid) {
    auto s = CaptureProcess(env, proc_.root(), pid);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : ProcSnapshot{};
  };
  proc_.Framework(800, 60, {"/usr/bin/python3", "t.py"}, kTorch);
  proc_.Add(801, 60, {"/usr/bin/python3", "train.py", "config/small.py"}, "python3");
  proc_.Add(802, 60, {"/usr/local/bin/torchrun", "t.py"}, "torchrun");
  proc_.Framework(803, 60, {"/usr/bin/python3", "w.py"}, {}, {"RANK=0", "WORLD_SIZE=2"});
  proc_.Framework(804, 60, {"/usr/bin/python3", "manage.py", "runserver"}, {});
  proc_.Framework(805, 60, {"/usr/bin/python3", "-m", "tensorboard.main"}, kTensorFlow);
  EXPECT_TRUE(HasJobEvidence(snap(800)));   // PyTorch mapped
  EXPECT_TRUE(HasJobEvidence(snap(801)));   // a trainer on its command line
  EXPECT_TRUE(HasJobEvidence(snap(802)));   // a launcher
  EXPECT_TRUE(HasJobEvidence(snap(803)));   // a rank by its environment
  EXPECT_FALSE(HasJobEvidence(snap(804)));  // a web app is no job
  EXPECT_FALSE(HasJobEvidence(snap(805)));  // never a job of its own
}

}  // namespace
}  // namespace vigil::discover

namespace vigil::discover {
namespace {

// Issue 15, "whose job is it": the owner is the real uid of the job's anchor
// (its launcher), named by the node's user database.
TEST_F(JobsTest, AJobsOwnerIsItsAnchorsRealUid) {
  UserNames users(UserNamesOptions{.lookup = [](uint32_t uid) -> std::optional<std::string> {
    if (uid == 1000) return "alice";
    return std::nullopt;
  }});
  auto detect = [&] {
    JobDetectionOptions o;
    o.proc_root = proc_.root();
    o.self_pid = 99999;
    o.users = &users;
    auto r = DetectJobs(o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<DetectedJob>{};
  };
  proc_.Add(900, 60, {"/usr/local/bin/torchrun", "--nproc_per_node", "2", "train.py"}, "torchrun",
            3000);
  proc_.Status(900, 1000);
  for (int i = 0; i < 2; ++i) {
    proc_.Framework(901 + i, 900, {"/usr/bin/python3", "train.py"}, kTorch, RankEnv(i, 2), 3010);
    proc_.Status(901 + i, 2000 + i);  // not the launcher's: the launcher decides
  }
  auto jobs = detect();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].uid, 1000);
  EXPECT_EQ(jobs[0].user, "alice");

  // Its launcher's status unreadable: the first process's that can be read.
  std::filesystem::remove(proc_.PidDir(900) + "/status");
  jobs = detect();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].uid, 2000);
  EXPECT_EQ(jobs[0].user, "2000");  // no name on this node (a container's uid): its digits

  // None readable: unknown.
  for (int pid : {901, 902}) std::filesystem::remove(proc_.PidDir(pid) + "/status");
  jobs = detect();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].uid, kUnknownUid);
  EXPECT_EQ(jobs[0].user, "");
}

TEST_F(JobsTest, ADepartedJobsOwnerComesFromItsSnapshot) {
  proc_.Add(910, 60, {"/usr/bin/python3", "train.py", "config/train_gpt2.py"}, "python3", 6100);
  proc_.Status(910, 1000);
  auto snap = CaptureProcess(Env::Default(), proc_.root(), 910);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->uid, 1000);
  std::filesystem::remove_all(proc_.PidDir(910));
  UserNames users(UserNamesOptions{.lookup = [](uint32_t) { return std::string("bob"); }});
  JobDetectionOptions o;
  o.proc_root = proc_.root();
  o.self_pid = 99999;
  o.departed = {*snap};
  o.users = &users;
  auto jobs = DetectJobs(o);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_TRUE((*jobs)[0].processes[0].departed);
  EXPECT_EQ((*jobs)[0].uid, 1000);
  EXPECT_EQ((*jobs)[0].user, "bob");
}

// A real process of another user: root forks, the child takes uid 65534
// (nobody) and execs a "torchrun"; detection over the real /proc names it.
TEST(RealProcTest, AJobOfAnotherUserIsOwnedByThem) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to setuid";
  const char* sleep_path = std::filesystem::exists("/bin/sleep") ? "/bin/sleep" : "/usr/bin/sleep";
  constexpr uid_t kNobody = 65534;
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(127);
    char arg0[] = "torchrun";
    char arg1[] = "30";
    char* argv[] = {arg0, arg1, nullptr};
    ::execv(sleep_path, argv);
    ::_exit(127);
  }
  std::vector<DetectedJob> jobs;
  std::optional<DetectedJob> found = DetectRealJob(pid, &jobs);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(found.has_value()) << "child exited with " << status;
  EXPECT_EQ(found->uid, kNobody);
  EXPECT_EQ(found->user, SystemUserName(kNobody).value_or("65534"));
  EXPECT_FALSE(found->user.empty());
  EXPECT_EQ(ReadRealUid(Env::Default(), "/proc", static_cast<int>(::getpid())), ::getuid());
}

}  // namespace
}  // namespace vigil::discover
