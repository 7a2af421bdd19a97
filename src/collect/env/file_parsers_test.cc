#include "collect/env/file_parsers.h"

#include <gtest/gtest.h>

#include <random>

namespace vigil::collect {
namespace {

TEST(FileParsersTest, OsRelease) {
  auto kv =
      ParseOsRelease("# c\nID=\"rhel\"\nVERSION_ID='8.9'\nPRETTY_NAME=\"Red Hat 8\"\nbad\n=x\n");
  EXPECT_EQ(kv["ID"], "rhel");
  EXPECT_EQ(kv["VERSION_ID"], "8.9");
  EXPECT_EQ(kv["PRETTY_NAME"], "Red Hat 8");
  EXPECT_EQ(kv.size(), 3u);
}

TEST(FileParsersTest, DriverVersionProprietaryAndOpen) {
  auto p = ParseDriverVersion(
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
      "GCC version:  gcc version 12.2.0\n");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->version, "550.54.15");
  EXPECT_EQ(p->flavor, "proprietary");
  auto o = ParseDriverVersion(
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  560.35.03  Release Build  "
      "(dvs-builder@U16-I3-B03-4-3)  Fri Aug 16 21:42:42 UTC 2024\n");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->version, "560.35.03");
  EXPECT_EQ(o->flavor, "open");
  EXPECT_FALSE(ParseDriverVersion("garbage").ok());
  EXPECT_FALSE(ParseDriverVersion("NVRM version: NVIDIA Kernel Module x").ok());
}

TEST(FileParsersTest, DistMetadataStopsAtTheBody) {
  auto m =
      ParseDistMetadata("Metadata-Version: 2.1\r\nName: torch\r\nVersion: 2.3.0\r\n\r\nName: no\n");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->name, "torch");
  EXPECT_EQ(m->version, "2.3.0");
  // The body's "Version:" is not a header.
  auto body = ParseDistMetadata("Name: x\n\nVersion: 1\n");
  ASSERT_FALSE(body.ok());
  EXPECT_NE(body.status().message().find("without Name and Version"), std::string::npos);
}

TEST(FileParsersTest, TorchVersionPy) {
  auto t = ParseTorchVersionPy(
      "from typing import Optional\n__version__ = '2.3.0+cu121'\ndebug = False\n"
      "cuda: Optional[str] = '12.1'\nhip: Optional[str] = None\n");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->version, "2.3.0+cu121");
  EXPECT_EQ(t->cuda, "12.1");
  auto cpu = ParseTorchVersionPy("__version__ = \"2.3.0+cpu\"\ncuda = None\n");
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->cuda, "");
  EXPECT_FALSE(ParseTorchVersionPy("cuda = '12.1'\n").ok());
}

TEST(FileParsersTest, CudaVersionFiles) {
  EXPECT_EQ(
      ParseCudaVersionJson(R"({"cuda": {"name": "CUDA SDK", "version": "12.4.1"}})").value_or(""),
      "12.4.1");
  EXPECT_FALSE(ParseCudaVersionJson("{\"cuda\": 3}").ok());
  EXPECT_FALSE(ParseCudaVersionJson("{").ok());
  EXPECT_EQ(ParseCudaVersionTxt("CUDA Version 10.2.89\n").value_or(""), "10.2.89");
  EXPECT_FALSE(ParseCudaVersionTxt("CUDA Version x").ok());
}

TEST(FileParsersTest, CondaMeta) {
  auto r = ParseCondaMeta(
      R"({"name": "pytorch", "version": "2.1.0", "build": "py3.10_cuda12.1_cudnn8.9.2_0"})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->build, "py3.10_cuda12.1_cudnn8.9.2_0");
  EXPECT_FALSE(ParseCondaMeta("{\"name\": \"x\"}").ok());
  EXPECT_FALSE(ParseCondaMeta("[]").ok());
}

TEST(FileParsersTest, Headers) {
  EXPECT_EQ(
      ParseCudnnHeader("#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n")
          .value_or(""),
      "9.1.0");
  EXPECT_EQ(ParseNcclHeader("#define NCCL_MAJOR 2\n#define NCCL_MINOR 20\n#define NCCL_PATCH 5\n")
                .value_or(""),
            "2.20.5");
  EXPECT_FALSE(ParseCudnnHeader("#define CUDNN_MAJOR x\n").ok());
}

TEST(FileParsersTest, EnvironFile) {
  auto e = ParseEnvironFile("A=1\nEMPTY=\nno equals\n=novalue\nB=x=y\r\n");
  EXPECT_EQ(e.size(), 3u);
  EXPECT_EQ(e.at("EMPTY"), "");  // set and empty, not unset
  EXPECT_EQ(e.at("B"), "x=y");
}

TEST(FileParsersTest, VersionsFromNames) {
  EXPECT_EQ(SoVersionFromName("libcudnn.so.8.9.7"), "8.9.7");
  EXPECT_EQ(SoVersionFromName("libnccl.so.2"), "2");
  EXPECT_EQ(SoVersionFromName("libcudart.so"), "");
  EXPECT_EQ(SoVersionFromName("libx.so.1.bak"), "");
  EXPECT_EQ(GlibcVersionFromName("libc-2.28.so"), "2.28");
  EXPECT_EQ(GlibcVersionFromName("libc.so.6"), "");
  EXPECT_EQ(
      GlibcVersionFromBytes("..GNU C Library (Debian GLIBC 2.36-9) stable release version 2.36.\n"),
      "2.36");
  EXPECT_EQ(GlibcVersionFromBytes("no banner"), "");
}

TEST(FileParsersTest, GarbageNeverCrashes) {
  std::mt19937 rng(7);
  const std::string seeds[] = {"Name: a\nVersion: 1\n", "__version__ = '1'\ncuda = '12'\n",
                               "{\"cuda\": {\"version\": \"1\"}}", "#define NCCL_MAJOR 2\n"};
  for (int i = 0; i < 5000; ++i) {
    std::string s = seeds[i % 4];
    for (int f = 0; f < 4; ++f) s[rng() % s.size()] = static_cast<char>(rng());
    s.resize(rng() % (s.size() + 1));
    (void)ParseDistMetadata(s);
    (void)ParseTorchVersionPy(s);
    (void)ParseCudaVersionJson(s);
    (void)ParseCondaMeta(s);
    (void)ParseNcclHeader(s);
    (void)ParseCudnnHeader(s);
    (void)ParseDriverVersion(s);
    (void)ParseOsRelease(s);
    (void)GlibcVersionFromBytes(s);
  }
}

}  // namespace
}  // namespace vigil::collect
