#include "env/lock/lock_format.h"

#include <gtest/gtest.h>

namespace vigil::env {
namespace {

EnvLock Sample() {
  EnvLock lock;
  lock.source = "live";
  lock.os = {"debian",         "12",   "Debian GNU/Linux 12 (bookworm)",
             "6.1.0-18-amd64", "2.36", "/usr/lib/x86_64-linux-gnu/libc.so.6"};
  lock.driver = {"550.54.15", "proprietary"};
  lock.gpu_source = "file";
  lock.gpus = {{"NVIDIA H100 80GB HBM3", "9.0", 81559}, {"NVIDIA A100-SXM4-40GB", "8.0", 40960}};
  lock.cuda = {{"/usr/local/cuda-12.4", "toolkit", "12.4.1", "version.json", {"/usr/local/cuda"}}};
  lock.libraries = {
      {"nccl",
       "/opt/venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2",
       "libnccl.so.2",
       "2.20.5",
       "package:nvidia-nccl-cu12",
       {}},
      {"cudnn",
       "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7",
       "libcudnn.so.8",
       "8.9.7",
       "file_name",
       {"/usr/lib/x86_64-linux-gnu/libcudnn.so.8", "/usr/lib/x86_64-linux-gnu/libcudnn.so"}}};
  lock.headers = {{"cudnn", "/usr/include/cudnn_version.h", "8.9.7"}};
  LockPython py;
  py.prefix = "/opt/venv";
  py.kind = "venv";
  py.interpreter = "/usr/bin/python3.11";
  py.version = "3.11";
  py.base_prefix = "/usr";
  py.torch_version = "2.3.0+cu121";
  py.torch_cuda = "12.1";
  py.packages = {{"torch", "2.3.0+cu121", "", "pip"}, {"numpy", "1.26.4", "", "pip"}};
  py.resolutions = {{"/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so",
                     "libnccl.so.2",
                     "/opt/venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2",
                     "runpath",
                     {"/usr/lib/x86_64-linux-gnu/libnccl.so.2"}}};
  lock.pythons = {py};
  lock.resolutions = {
      {"", "libcudnn.so.8", "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7", "default", {}}};
  lock.environment = {{"CUDA_VISIBLE_DEVICES", "0,1"}, {"NCCL_DEBUG", ""}};
  lock.notes = {"b note", "a note"};
  return lock;
}

TEST(LockFormatTest, WriteIsDeterministicWhateverTheInputOrder) {
  EnvLock a = Sample();
  EnvLock b = Sample();
  std::reverse(b.gpus.begin(), b.gpus.end());
  std::reverse(b.libraries.begin(), b.libraries.end());
  std::reverse(b.pythons[0].packages.begin(), b.pythons[0].packages.end());
  std::reverse(b.notes.begin(), b.notes.end());
  std::reverse(b.libraries[0].aliases.begin(), b.libraries[0].aliases.end());
  EXPECT_EQ(WriteLock(a), WriteLock(b));
  EXPECT_EQ(WriteLock(a), WriteLock(a));
}

TEST(LockFormatTest, StartsWithTheFormatAndHasNoTimestamp) {
  std::string text = WriteLock(Sample());
  EXPECT_EQ(text.rfind("{\n  \"format\": 1,\n", 0), 0u) << text.substr(0, 40);
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find("time"), std::string::npos);
}

TEST(LockFormatTest, ParsesBackToTheSameLock) {
  EnvLock lock = Sample();
  std::string text = WriteLock(lock);
  auto parsed = ParseLock(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  Canonicalize(&lock);
  EXPECT_EQ(*parsed, lock);
  EXPECT_EQ(WriteLock(*parsed), text);
  EXPECT_EQ(parsed->environment.at("NCCL_DEBUG"), "");  // set-and-empty survives
}

TEST(LockFormatTest, EmptyLockRoundTrips) {
  auto parsed = ParseLock(WriteLock(EnvLock{}));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, EnvLock{});
}

TEST(LockFormatTest, InvalidUtf8IsReplacedNotThrown) {
  EnvLock lock;
  lock.os.pretty_name = std::string("bad \xff\xfe name");
  std::string text = WriteLock(lock);
  auto parsed = ParseLock(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_NE(parsed->os.pretty_name.find("bad"), std::string::npos);
}

TEST(LockFormatTest, RejectsWhatIsNotALockWithAClearMessage) {
  struct Case {
    const char* text;
    const char* message_part;
  } cases[] = {
      {"", "not valid JSON"},
      {"{\"format\": 1,", "not valid JSON"},
      {"[1,2]", "top level must be an object"},
      {"{}", "no \"format\""},
      {"{\"format\": \"1\"}", "no \"format\""},
      {"{\"format\": 2}", "format 2 is not supported"},
      {"{\"format\": 1, \"gpus\": {}}", "\"gpus\" must be a list of objects"},
      {"{\"format\": 1, \"gpus\": [{\"memory_mib\": -1}]}",
       "\"memory_mib\" must be a non-negative"},
      {"{\"format\": 1, \"os\": {\"kernel\": 5}}", "\"kernel\" must be a string"},
      {"{\"format\": 1, \"environment\": {\"A\": 1}}",
       "\"environment\" must be an object of strings"},
      {"{\"format\": 1, \"pythons\": [{\"packages\": [3]}]}",
       "\"packages\" must be a list of objects"},
      {"{\"format\": 1, \"notes\": [1]}", "\"notes\" must be a list of strings"},
  };
  for (const Case& c : cases) {
    auto parsed = ParseLock(c.text);
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_NE(parsed.status().message().find(c.message_part), std::string::npos)
        << c.text << " -> " << parsed.status().message();
  }
}

TEST(LockFormatTest, IgnoresUnknownKeys) {
  auto parsed = ParseLock("{\"format\": 1, \"future\": [1], \"os\": {\"id\": \"rhel\", \"x\": 2}}");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->os.id, "rhel");
}

}  // namespace
}  // namespace vigil::env
