#include "collect/env/env_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "collect/env/elf_test_util.h"
#include "core/strings.h"
#include "core/temp_dir.h"
#include "env/lock/lock_format.h"

namespace vigil::collect {
namespace {

namespace fs = std::filesystem;

std::string DataDir() {
  const char* src = std::getenv("VIGIL_SOURCE_DIR");
  return std::string(src != nullptr ? src : ".") + "/tests/data/env";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

env::EnvLock Read(const std::string& root) {
  EnvReadOptions o;
  o.root = root;
  auto lock = ReadEnvLock(o);
  EXPECT_TRUE(lock.ok()) << lock.status().ToString();
  return lock.ok() ? *lock : env::EnvLock{};
}

const env::LockPython* FindPython(const env::EnvLock& lock, const std::string& prefix) {
  for (const env::LockPython& p : lock.pythons) {
    if (p.prefix == prefix) return &p;
  }
  return nullptr;
}

const env::LockResolution* FindResolution(const std::vector<env::LockResolution>& v,
                                          const std::string& needed) {
  for (const env::LockResolution& r : v) {
    if (r.needed == needed) return &r;
  }
  return nullptr;
}

// The fixtures' ELF files are made by BuildTestElf from tests/data/env/elves.txt;
// this keeps the committed bytes and their description in step.
TEST(EnvFixturesTest, ElfFilesMatchTheirSpec) {
  const bool regenerate = std::getenv("VIGIL_REGENERATE_ELVES") != nullptr;
  std::ifstream spec(DataDir() + "/elves.txt");
  ASSERT_TRUE(spec) << "no " << DataDir() << "/elves.txt";
  std::string line;
  int count = 0;
  while (std::getline(spec, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string_view> f = Split(line, '|');
    f.resize(5);
    testing::TestElfSpec s;
    s.soname = std::string(f[1]);
    for (std::string_view n : Split(f[2], ',')) {
      if (!n.empty()) s.needed.emplace_back(n);
    }
    s.rpath = std::string(f[3]);
    s.runpath = std::string(f[4]);
    const std::string path = DataDir() + "/" + std::string(f[0]);
    const std::string want = testing::BuildTestElf(s);
    if (regenerate) Write(path, want);
    EXPECT_EQ(Slurp(path), want) << path << " (VIGIL_REGENERATE_ELVES=1 rewrites it)";
    ++count;
  }
  EXPECT_GT(count, 10);
}

// Each fixture's lock, reviewed by hand, sits next to it as FIXTURE.lock.json.
// VIGIL_REGENERATE_GOLDEN=1 rewrites them (then review the diff).
class GoldenTest : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenTest, LockMatchesTheReviewedFile) {
  const std::string root = DataDir() + "/" + GetParam();
  const std::string golden = root + ".lock.json";
  std::string got = env::WriteLock(Read(root));
  if (std::getenv("VIGIL_REGENERATE_GOLDEN") != nullptr) Write(golden, got);
  EXPECT_EQ(got, Slurp(golden)) << "VIGIL_REGENERATE_GOLDEN=1 rewrites " << golden;
}

TEST_P(GoldenTest, TwoReadsGiveTheSameBytes) {
  const std::string root = DataDir() + "/" + GetParam();
  EXPECT_EQ(env::WriteLock(Read(root)), env::WriteLock(Read(root)));
}

TEST_P(GoldenTest, TheRootPathDoesNotLeakIntoTheLock) {
  const std::string root = DataDir() + "/" + GetParam();
  std::string text = env::WriteLock(Read(root));
  EXPECT_EQ(text.find(DataDir()), std::string::npos);
  // Nor the same tree reached through a different path.
  EXPECT_EQ(env::WriteLock(Read(root + "/")), text);
}

TEST_P(GoldenTest, ParsesBack) {
  env::EnvLock lock = Read(DataDir() + "/" + GetParam());
  auto parsed = env::ParseLock(env::WriteLock(lock));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, lock);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenTest,
                         ::testing::Values("debian12-venv-wheels", "rhel8-conda"));

TEST(EnvReaderTest, DebianVenvWithPipWheels) {
  env::EnvLock lock = Read(DataDir() + "/debian12-venv-wheels");
  EXPECT_EQ(lock.source, "root");
  EXPECT_EQ(lock.os.id, "debian");
  EXPECT_EQ(lock.os.kernel, "6.1.0-18-amd64");
  EXPECT_EQ(lock.os.glibc, "2.36");
  EXPECT_EQ(lock.driver.version, "550.54.15");  // the module, not version.json's
  ASSERT_EQ(lock.gpus.size(), 2u);
  EXPECT_EQ(lock.gpus[0].compute_capability, "9.0");
  EXPECT_EQ(lock.gpu_source, "file");

  ASSERT_FALSE(lock.cuda.empty());
  const env::LockCuda* toolkit = nullptr;
  for (const env::LockCuda& c : lock.cuda) {
    if (c.kind == "toolkit") toolkit = &c;
  }
  ASSERT_NE(toolkit, nullptr);
  EXPECT_EQ(toolkit->path, "/usr/local/cuda-12.4");
  EXPECT_EQ(toolkit->version, "12.4.1");
  // /usr/local/cuda is an absolute link: resolved inside the tree.
  EXPECT_EQ(toolkit->aliases, (std::vector<std::string>{"/usr/local/cuda"}));

  const env::LockPython* venv = FindPython(lock, "/opt/venv");
  ASSERT_NE(venv, nullptr);
  EXPECT_EQ(venv->kind, "venv");
  EXPECT_EQ(venv->interpreter, "/usr/bin/python3.11");
  EXPECT_EQ(venv->base_prefix, "/usr");
  EXPECT_EQ(venv->version, "3.11");
  EXPECT_EQ(venv->torch_version, "2.3.0+cu121");
  EXPECT_EQ(venv->torch_cuda, "12.1");

  // torch's DT_RPATH names the wheels first: LD_LIBRARY_PATH's CUDA 12.4
  // runtime is there but shadowed (pytorch/builder#1150 chose RPATH for this).
  const env::LockResolution* cudart = FindResolution(venv->resolutions, "libcudart.so.12");
  ASSERT_NE(cudart, nullptr);
  EXPECT_EQ(cudart->via, "rpath");
  EXPECT_EQ(cudart->resolved,
            "/opt/venv/lib/python3.11/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12");
  EXPECT_EQ(cudart->shadowed,
            (std::vector<std::string>{
                "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12.4.127"}));
  // The job's own view: LD_LIBRARY_PATH wins.
  const env::LockResolution* job = FindResolution(lock.resolutions, "libcudart.so.12");
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->via, "LD_LIBRARY_PATH");

  // Versions: the wheel's package for a bare soname, the file name otherwise.
  bool saw_cudnn = false, saw_system_nccl = false;
  for (const env::LockLibrary& l : lock.libraries) {
    if (l.family == "cudnn") {
      saw_cudnn = true;
      EXPECT_EQ(l.version, "8.9.2.26");
      EXPECT_EQ(l.version_source, "package:nvidia-cudnn-cu12");
      EXPECT_EQ(l.soname, "libcudnn.so.8");
    }
    if (l.path == "/usr/lib/x86_64-linux-gnu/libnccl.so.2.18.3") {
      saw_system_nccl = true;
      EXPECT_EQ(l.version, "2.18.3");
      EXPECT_EQ(l.aliases, (std::vector<std::string>{"/usr/lib/x86_64-linux-gnu/libnccl.so.2"}));
    }
  }
  EXPECT_TRUE(saw_cudnn);
  EXPECT_TRUE(saw_system_nccl);

  // Only GPU-relevant variables; set-and-empty kept; secrets never.
  EXPECT_EQ(lock.environment.at("NCCL_DEBUG"), "");
  EXPECT_EQ(lock.environment.at("CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(lock.environment.count("HOME"), 0u);
  EXPECT_EQ(lock.environment.count("HF_TOKEN"), 0u);
}

TEST(EnvReaderTest, RhelWithCondaEnvs) {
  env::EnvLock lock = Read(DataDir() + "/rhel8-conda");
  EXPECT_EQ(lock.os.id, "rhel");
  EXPECT_EQ(lock.os.glibc, "2.28");
  EXPECT_EQ(lock.os.glibc_path, "/usr/lib64/libc-2.28.so");
  EXPECT_EQ(lock.driver.version, "");  // no module loaded
  ASSERT_EQ(lock.gpus.size(), 1u);
  EXPECT_EQ(lock.gpus[0].compute_capability, "8.0");  // a number in the file

  // /usr/bin/python3 -> /etc/alternatives/python3 -> /usr/bin/python3.6.
  const env::LockPython* system = FindPython(lock, "/usr");
  ASSERT_NE(system, nullptr);
  EXPECT_EQ(system->interpreter, "/usr/bin/python3.6");
  // RHEL's lib/lib64 split: packages from both.
  std::set<std::string> names;
  for (const env::LockPackage& p : system->packages) names.insert(p.name);
  EXPECT_EQ(names, (std::set<std::string>{"PyYAML", "six"}));

  const env::LockPython* train = FindPython(lock, "/opt/conda/envs/train");
  ASSERT_NE(train, nullptr);
  EXPECT_EQ(train->kind, "conda");
  EXPECT_EQ(train->version, "3.10");
  EXPECT_EQ(train->torch_cuda, "12.1");
  bool saw_pytorch = false;
  for (const env::LockPackage& p : train->packages) {
    if (p.name == "pytorch") {
      saw_pytorch = true;
      EXPECT_EQ(p.build, "py3.10_cuda12.1_cudnn8.9.2_0");
      EXPECT_EQ(p.installer, "conda");
    }
  }
  EXPECT_TRUE(saw_pytorch);
  EXPECT_NE(FindPython(lock, "/opt/conda"), nullptr);
  const env::LockPython* venv = FindPython(lock, "/home/alice/proj/.venv");
  ASSERT_NE(venv, nullptr);
  EXPECT_EQ(venv->version, "3.11");
  EXPECT_EQ(venv->base_prefix, "/opt/conda");

  // torch's DT_RUNPATH comes after LD_LIBRARY_PATH: the system CUDA 12.2
  // runtime wins over the env's own, the classic mismatch doctor will flag.
  const env::LockResolution* cudart = FindResolution(train->resolutions, "libcudart.so.12");
  ASSERT_NE(cudart, nullptr);
  EXPECT_EQ(cudart->via, "LD_LIBRARY_PATH");
  EXPECT_EQ(cudart->resolved,
            "/usr/local/cuda-12.2/targets/x86_64-linux/lib/libcudart.so.12.2.140");
  EXPECT_EQ(cudart->shadowed,
            (std::vector<std::string>{"/opt/conda/envs/train/lib/libcudart.so.12.1.105"}));
  const env::LockResolution* nccl = FindResolution(train->resolutions, "libnccl.so.2");
  ASSERT_NE(nccl, nullptr);
  EXPECT_EQ(nccl->via, "runpath");

  // CUDA: a version.json toolkit, a version.txt one, and conda's runtime.
  std::map<std::string, std::string> cuda;
  for (const env::LockCuda& c : lock.cuda) cuda[c.path] = c.version + " " + c.version_source;
  EXPECT_EQ(cuda["/usr/local/cuda-12.2"], "12.2.2 version.json");
  EXPECT_EQ(cuda["/usr/local/cuda-10.2"], "10.2.89 version.txt");
  EXPECT_EQ(cuda["/opt/conda/envs/train"], "12.1.0 conda-meta:cuda-runtime");

  EXPECT_EQ(lock.environment.at("CUDA_VISIBLE_DEVICES"), "");
  EXPECT_EQ(lock.environment.count("AWS_SECRET_ACCESS_KEY"), 0u);
  // The broken conda record is a note, not a failure.
  bool noted = false;
  for (const std::string& n : lock.notes) {
    noted |= n.find("broken-1.0-0.json") != std::string::npos;
  }
  EXPECT_TRUE(noted);
}

TEST(EnvReaderTest, AnEmptyRootTakesNothingFromTheHost) {
  TempDir dir("vigil-envlock");
  ::setenv("CUDA_VISIBLE_DEVICES", "host-value", 1);
  env::EnvLock lock = Read(dir.path());
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_TRUE(lock.environment.empty());
  EXPECT_TRUE(lock.gpus.empty());
  EXPECT_EQ(lock.gpu_source, "none");
  EXPECT_TRUE(lock.os.id.empty());
  EXPECT_TRUE(lock.os.kernel.empty());
  EXPECT_TRUE(lock.pythons.empty());  // the host has /usr/bin/python3; the root does not
  EXPECT_TRUE(lock.libraries.empty());
  EXPECT_FALSE(lock.notes.empty());
  for (const std::string& n : lock.notes) EXPECT_EQ(n.find(dir.path()), std::string::npos) << n;
}

TEST(EnvReaderTest, HostileTreeIsReadWithoutCrashing) {
  TempDir dir("vigil-envlock");
  const std::string r = dir.path();
  // /usr/lib -> /etc (absolute), a loop, garbage ELF and metadata files.
  Write(r + "/etc/os-release", "ID=inside\n");
  fs::create_directories(r + "/usr");
  ASSERT_EQ(::symlink("/etc", (r + "/usr/lib").c_str()), 0);
  ASSERT_EQ(::symlink("loop", (r + "/usr/local").c_str()), 0);
  ASSERT_EQ(::symlink("/usr/local", (r + "/usr/loop").c_str()), 0);
  std::string elf = testing::BuildTestElf({"libcudnn.so.9", {"libcudart.so.12"}, "", ""});
  Write(r + "/lib64/libcudnn.so.9", elf.substr(0, 100));  // truncated
  Write(r + "/lib64/libnccl.so.2",
        "\x7f"
        "ELF garbage that is not an ELF file");
  Write(r + "/lib64/libcudart.so.12", "");
  ASSERT_EQ(::symlink("nowhere", (r + "/lib64/libcublas.so.12").c_str()), 0);
  Write(r + "/opt/venv/pyvenv.cfg", "\xff\xfe garbage\n");
  Write(r + "/opt/venv/lib/python3.11/site-packages/bad-1.dist-info/METADATA", "\x00\x01\x02");
  Write(r + "/opt/venv/lib/python3.11/site-packages/torch/version.py", "garbage");
  Write(r + "/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so",
        elf.substr(0, 300));
  Write(r + "/environ", "\xff=\xfe\nNCCL_DEBUG=INFO\n");
  Write(r + "/.vigil-gpus.json", "{not json");
  env::EnvLock lock = Read(r);
  EXPECT_EQ(lock.os.id, "inside");
  EXPECT_EQ(lock.environment.at("NCCL_DEBUG"), "INFO");
  std::string notes;
  for (const std::string& n : lock.notes) notes += n + "\n";
  EXPECT_NE(notes.find("/lib64/libcudnn.so.9: bad ELF file"), std::string::npos) << notes;
  EXPECT_NE(notes.find("/lib64/libnccl.so.2: bad ELF file"), std::string::npos) << notes;
  EXPECT_NE(notes.find("bad-1.dist-info/METADATA: package metadata without"), std::string::npos)
      << notes;
  EXPECT_NE(notes.find("torch/version.py: torch/version.py without __version__"), std::string::npos)
      << notes;
  EXPECT_NE(notes.find("libcublas.so.12: a link to nothing"), std::string::npos) << notes;
  EXPECT_NE(notes.find(".vigil-gpus.json: must be a JSON list"), std::string::npos) << notes;
  // And the output is still a valid, parseable lock.
  EXPECT_TRUE(env::ParseLock(env::WriteLock(lock)).ok());
}

TEST(EnvReaderTest, ARelativeRootIsTakenFromTheWorkingDirectory) {
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(::chdir(DataDir().c_str()), 0);
  std::string relative = env::WriteLock(Read("rhel8-conda"));
  ASSERT_EQ(::chdir(cwd), 0);
  EXPECT_EQ(relative, env::WriteLock(Read(DataDir() + "/rhel8-conda")));
}

TEST(EnvReaderTest, ARootThatIsNotADirectoryFails) {
  EnvReadOptions o;
  o.root = "/no/such/vigil/root";
  auto lock = ReadEnvLock(o);
  ASSERT_FALSE(lock.ok());
  EXPECT_NE(lock.status().message().find("is not a directory"), std::string::npos);
}

TEST(EnvReaderTest, LiveReadUsesTheGivenEnvironmentAndGpus) {
  EnvReadOptions o;
  o.live_environment = {{"CUDA_VISIBLE_DEVICES", "3"}, {"USER", "me"}};
  o.live_gpus = [] {
    return Result<std::vector<env::LockGpu>>(
        std::vector<env::LockGpu>{{"NVIDIA L4", "8.9", 23034}});
  };
  auto lock = ReadEnvLock(o);
  ASSERT_TRUE(lock.ok()) << lock.status().ToString();
  EXPECT_EQ(lock->source, "live");
  EXPECT_EQ(lock->gpu_source, "nvml");
  ASSERT_EQ(lock->gpus.size(), 1u);
  EXPECT_EQ(lock->environment, (std::map<std::string, std::string>{{"CUDA_VISIBLE_DEVICES", "3"}}));
  EXPECT_FALSE(lock->os.kernel.empty());  // this machine's /proc
}

TEST(IsLockedVariableTest, Cases) {
  for (const char* yes :
       {"CUDA_VISIBLE_DEVICES", "NCCL_IB_HCA", "LD_LIBRARY_PATH", "CUDA_HOME",
        "PYTORCH_CUDA_ALLOC_CONF", "TORCH_CUDA_ARCH_LIST", "NVIDIA_VISIBLE_DEVICES"}) {
    EXPECT_TRUE(IsLockedVariable(yes)) << yes;
  }
  for (const char* no : {"HOME", "USER", "NCCL_API_KEY", "CUDA_TOKEN", "PWD"}) {
    EXPECT_FALSE(IsLockedVariable(no)) << no;
  }
}

}  // namespace
}  // namespace vigil::collect
