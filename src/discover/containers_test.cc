// Docker json-file, CRI pod and vigil-run spool discovery over fake trees.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/temp_dir.h"
#include "discover/discover_internal.h"
#include "discover/fake_tree_test_util.h"
#include "discover/log_sources.h"

namespace vigil::discover {
namespace {

using testing::Symlink;
using testing::WriteFile;

constexpr const char* kId = "3f4e5d6c7b8a9f0e1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c1b2a3f4e";
constexpr const char* kId2 = "aa11bb22cc33dd44ee55ff66aa11bb22cc33dd44ee55ff66aa11bb22cc33dd44";

// Trimmed from a real `docker compose up` container (docker 24).
constexpr const char* kComposeConfig = R"({
  "StreamConfig": {},
  "State": {"Running": true, "Paused": false, "Pid": 2412, "ExitCode": 0,
            "StartedAt": "2026-11-29T08:12:03.511Z"},
  "ID": "3f4e5d6c7b8a9f0e1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c1b2a3f4e",
  "Created": "2026-11-29T08:12:02.9Z",
  "Path": "python",
  "Args": ["train.py", "--epochs", "90"],
  "Config": {
    "Hostname": "3f4e5d6c7b8a", "User": "", "Tty": false,
    "Env": ["PATH=/usr/local/sbin:/usr/local/bin", "NVIDIA_VISIBLE_DEVICES=all"],
    "Cmd": ["python", "train.py", "--epochs", "90"],
    "Image": "nvcr.io/nvidia/pytorch:24.05-py3",
    "WorkingDir": "/workspace",
    "Labels": {
      "com.docker.compose.config-hash": "9c1e7f",
      "com.docker.compose.project": "resnet",
      "com.docker.compose.service": "trainer",
      "com.docker.compose.version": "2.27.0",
      "com.nvidia.volumes.needed": "nvidia_driver"
    }
  },
  "Image": "sha256:5b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c",
  "NetworkSettings": {"Networks": {"resnet_default": {"IPAddress": "172.18.0.2"}}},
  "LogPath": "/var/lib/docker/containers/3f4e.../3f4e...-json.log",
  "Name": "/resnet-trainer-1",
  "Driver": "overlay2",
  "MountLabel": "", "ProcessLabel": "",
  "HostnamePath": "/var/lib/docker/containers/3f4e.../hostname"
})";

std::string Label(const LogSource& s, const std::string& name) {
  for (const auto& l : s.labels) {
    if (l.name == name) return l.value;
  }
  return "";
}

class ContainersTest : public ::testing::Test {
 protected:
  DiscoveryOptions Options() {
    DiscoveryOptions o;
    o.proc_root.clear();
    o.docker_root = dir_.Join("docker");
    o.pods_root = dir_.Join("pods");
    o.run_spool_dir = dir_.Join("home/spool/run");
    o.self_home = dir_.Join("home");
    return o;
  }
  std::vector<LogSource> Discover() {
    auto r = DiscoverLogSources(Options());
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::vector<LogSource>{};
  }
  std::string DockerLog(const std::string& id) {
    return dir_.Join("docker/" + id + "/" + id + "-json.log");
  }
  void AddContainer(const std::string& id, const std::string& config) {
    WriteFile(DockerLog(id), "{\"log\":\"hi\\n\",\"stream\":\"stdout\",\"time\":\"x\"}\n");
    if (!config.empty()) WriteFile(dir_.Join("docker/" + id + "/config.v2.json"), config);
  }
  TempDir dir_;
};

TEST_F(ContainersTest, DockerComposeContainer) {
  AddContainer(kId, kComposeConfig);
  auto got = Discover();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].path, DockerLog(kId));
  EXPECT_EQ(got[0].format, LogFormat::kDockerJson);
  EXPECT_EQ(got[0].origin, "docker");
  EXPECT_EQ(got[0].labels, (wire::Labels{{"container", "resnet-trainer-1"},
                                         {"container_id", "3f4e5d6c7b8a"},
                                         {"image", "nvcr.io/nvidia/pytorch:24.05-py3"},
                                         {"job", "trainer"},
                                         {"source", DockerLog(kId)}}));
}

TEST_F(ContainersTest, PlainContainerUsesItsNameAsJob) {
  AddContainer(kId, R"({"Name":"/vllm","Config":{"Image":"vllm/vllm-openai:v0.6","Labels":null}})");
  auto got = Discover();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(Label(got[0], "job"), "vllm");
  EXPECT_EQ(Label(got[0], "container"), "vllm");
  EXPECT_EQ(Label(got[0], "image"), "vllm/vllm-openai:v0.6");
}

TEST_F(ContainersTest, MalformedOrMissingConfigStillTailsTheLog) {
  AddContainer(kId, R"({"Name": "/half", "Config": {"Image": )");  // cut mid-write
  AddContainer(kId2, "");
  // Wrong types throw in nlohmann's accessors; they must not escape.
  std::string id3 = "cc33";
  AddContainer(id3, R"({"Name": 42, "Config": {"Image": ["x"], "Labels": "no"}})");
  std::string id4 = "dd44";
  AddContainer(id4, std::string(5u << 20, ' ') + "{}");  // over the 4 MiB bound
  WriteFile(dir_.Join("docker/ee55/hostname"), "not a container with json-file logs\n");
  // Deep nesting must not exhaust the stack, in parsing or in destruction.
  std::string id5 = "ff66";
  AddContainer(id5, std::string(1u << 18, '[') + std::string(1u << 18, ']'));
  auto got = Discover();
  ASSERT_EQ(got.size(), 5u);
  for (const LogSource& s : got) {
    ASSERT_EQ(s.labels.size(), 2u) << s.path;
    EXPECT_EQ(s.labels[0].name, "container_id");
    EXPECT_EQ(s.labels[1].name, "source");
    EXPECT_EQ(s.format, LogFormat::kDockerJson);
  }
  EXPECT_EQ(Label(got[0], "container_id"), "3f4e5d6c7b8a");
  EXPECT_EQ(Label(got[1], "container_id"), "aa11bb22cc33");
  EXPECT_EQ(Label(got[2], "container_id"), "cc33");
}

TEST_F(ContainersTest, PodsTakeTheNewestLogPerContainer) {
  std::string pod = dir_.Join("pods/ml_trainer-0_5d1c9a8e-1b2c-4d3e-8f9a-0b1c2d3e4f5a");
  WriteFile(pod + "/pytorch/0.log", "old\n");
  WriteFile(pod + "/pytorch/1.log", "2026-11-30T04:00:00.000000000Z stdout F hi\n");
  WriteFile(pod + "/pytorch/1.log.20261130-040000", "rotated\n");
  WriteFile(pod + "/pytorch/0.log.gz", "gz");
  WriteFile(pod + "/pytorch/10.log.20261130-040000.gz", "gz");
  WriteFile(pod + "/sidecar/3.log", "x\n");
  WriteFile(pod + "/empty/0.log.20261130-040000", "only rotations\n");
  WriteFile(dir_.Join("pods/garbage/c/0.log"), "not a pod dir\n");
  auto got = Discover();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].path, pod + "/pytorch/1.log");
  EXPECT_EQ(got[0].format, LogFormat::kCri);
  EXPECT_EQ(got[0].origin, "cri");
  EXPECT_EQ(got[0].labels, (wire::Labels{{"container", "pytorch"},
                                         {"namespace", "ml"},
                                         {"pod", "trainer-0"},
                                         {"source", pod + "/pytorch/1.log"}}));
  EXPECT_EQ(got[1].path, pod + "/sidecar/3.log");
}

TEST_F(ContainersTest, DockershimPodLogIsTheDockerFileOnce) {
  // kubelet on docker links the pod log to the container's json-file log.
  AddContainer(kId, R"({"Name":"/k8s_pytorch_trainer-0_ml_5d1c_0","Config":{"Image":"pt:1",
    "Labels":{"io.kubernetes.container.name":"pytorch","io.kubernetes.pod.name":"trainer-0",
              "io.kubernetes.pod.namespace":"ml"}}})");
  std::string pod = dir_.Join("pods/ml_trainer-0_5d1c");
  Symlink(DockerLog(kId), pod + "/pytorch/0.log");
  auto got = Discover();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].path, DockerLog(kId));
  EXPECT_EQ(got[0].format, LogFormat::kDockerJson);
  EXPECT_EQ(got[0].origin, "cri");
  EXPECT_EQ(got[0].labels, (wire::Labels{{"container", "pytorch"},
                                         {"container_id", "3f4e5d6c7b8a"},
                                         {"image", "pt:1"},
                                         {"job", "pytorch"},
                                         {"namespace", "ml"},
                                         {"pod", "trainer-0"},
                                         {"source", DockerLog(kId)}}));
}

TEST_F(ContainersTest, VigilRunSpool) {
  std::string spool = dir_.Join("home/spool/run");
  WriteFile(spool + "/train.1732939200000-4242.log", "step 1\n");
  WriteFile(
      spool + "/train.1732939200000-4242.json",
      R"({"name":"train","pid":4242,"cmd":["python","train.py"],"started_ms":1732939200000})");
  // The sidecar's name wins over the sanitized file name.
  WriteFile(spool + "/my_run.x9.log", "");
  WriteFile(spool + "/my_run.x9.json", R"({"name":"my run","pid":1,"exit_code":0})");
  WriteFile(spool + "/v1.2.eval.ab-12.log", "");  // dotted name, no sidecar
  WriteFile(spool + "/broken.zz.log", "");
  WriteFile(spool + "/broken.zz.json", "{\"name\": 7");
  WriteFile(spool + "/noid.log", "");         // no id: not ours
  WriteFile(spool + "/bad.i.d!.log", "");     // id with a bad character
  WriteFile(spool + "/.train.tmp1.log", "");  // hidden
  WriteFile(spool + "/train.1732939200000-4242.json.tmp", "");
  WriteFile(dir_.Join("home/logs/agent.log"), "vigil's own log\n");
  auto got = Discover();
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].path, spool + "/broken.zz.log");
  EXPECT_EQ(Label(got[0], "job"), "broken");
  EXPECT_EQ(Label(got[1], "job"), "my run");
  EXPECT_EQ(got[2].path, spool + "/train.1732939200000-4242.log");
  EXPECT_EQ(got[2].labels, (wire::Labels{{"job", "train"}, {"source", got[2].path}}));
  EXPECT_EQ(got[2].origin, "vigil-run");
  EXPECT_EQ(got[2].format, LogFormat::kPlain);
  EXPECT_EQ(Label(got[3], "job"), "v1.2.eval");
}

// A `vigil run` that records its streams apart: two sources of one job, each
// with its stream; an older record (both streams in one file) has none.
TEST_F(ContainersTest, VigilRunSpoolStreamsApart) {
  std::string spool = dir_.Join("home/spool/run");
  WriteFile(spool + "/train.1732939200000-4242.log", "step 1\n");
  WriteFile(spool + "/train.1732939200000-4242.stderr.log", "Traceback (most recent call last):\n");
  WriteFile(spool + "/train.1732939200000-4242.json",
            R"({"name":"train","streams":"split","pid":4242,"started_ms":1732939200000})");
  WriteFile(spool + "/old.1732939100000-4000.log", "both\n");
  WriteFile(spool + "/old.1732939100000-4000.json", R"({"name":"old","pid":4000})");
  WriteFile(spool + "/.stderr.log", "");  // no name, no id
  auto got = Discover();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].labels, (wire::Labels{{"job", "old"}, {"source", got[0].path}}));
  EXPECT_EQ(got[1].path, spool + "/train.1732939200000-4242.log");
  EXPECT_EQ(Label(got[1], "stream"), "stdout");
  EXPECT_EQ(got[2].path, spool + "/train.1732939200000-4242.stderr.log");
  EXPECT_EQ(Label(got[2], "stream"), "stderr");
  EXPECT_EQ(Label(got[2], "job"), "train");
}

TEST_F(ContainersTest, DockerConfigsAreParsedAgainOnlyWhenChanged) {
  AddContainer(kId, kComposeConfig);
  AddContainer(kId2, R"({"Name":"/a","Config":{"Image":"img:1"}})");
  internal::DockerConfigCache cache;
  auto scan = [&] {
    std::vector<internal::Candidate> out;
    internal::ScanDocker(dir_.Join("docker"), &out, 100, &cache);
    return out;
  };
  auto first = scan();
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(cache.parses, 2u);
  auto second = scan();
  EXPECT_EQ(cache.parses, 2u);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0].source, first[0].source);
  EXPECT_EQ(second[1].source, first[1].source);

  // docker rewrites the config (rename over it) on rename or restart.
  std::string cfg = dir_.Join(std::string("docker/") + kId2 + "/config.v2.json");
  WriteFile(cfg + ".tmp", R"({"Name":"/renamed","Config":{"Image":"img:2"}})");
  std::filesystem::rename(cfg + ".tmp", cfg);
  auto third = scan();
  EXPECT_EQ(cache.parses, 3u);
  EXPECT_EQ(Label(third[1].source, "container"), "renamed");

  // Removed containers leave the cache.
  std::filesystem::remove_all(dir_.Join(std::string("docker/") + kId));
  scan();
  EXPECT_EQ(cache.by_id.size(), 1u);

  // The discoverer carries the cache across rounds.
  LogSourceDiscoverer d(Options());
  auto a = d.Discover();
  auto b = d.Discover();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(a->size(), 1u);
}

TEST_F(ContainersTest, MissingRootsAreNotErrors) {
  auto got = DiscoverLogSources(Options());
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());
}

}  // namespace
}  // namespace vigil::discover
