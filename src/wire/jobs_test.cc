#include "wire/jobs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <string>

namespace vigil::wire {
namespace {

// What the encoder before this codec (collect/jobs/job_history.cc,
// EncodeSnapshot over TrackedJob) wrote for FullSnapshot(): written by a
// throwaway program built against that code. Files and agents in the field
// hold exactly this, so it must decode, and re-encode to the same bytes but
// for the fields added since (WithNewFields).
constexpr std::string_view kOldSnapshot =
    R"json({"version":1,"node":"gpu-7","time_ms":1764464400000,"jobs":[{"id":"4242-1764460800000","name":"train \"big\" \\ 模型 \u003cb\u003e\u0026\n","kind":"training","framework":"pytorch","launcher":"torchrun","trainer":"transformers","world_size":2,"container_id":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","master_addr":"10.0.0.1","master_port":29500,"start_time_ms":1764460800000,"first_seen_ms":1764460805000,"last_seen_ms":1764464400000,"ended":true,"processes":[{"pid":4242,"ppid":1,"role":"launcher","rank":-1,"local_rank":-1,"start_time_ms":1764460800000,"cmdline":"torchrun --nproc_per_node 2 train.py"},{"pid":4243,"ppid":4242,"role":"rank","rank":1,"local_rank":1,"start_time_ms":1764460800500,"cmdline":"python train.py"},{"pid":4250,"ppid":4243,"role":"helper","rank":-1,"local_rank":-1,"start_time_ms":1764460801000,"cmdline":"python train.py"}],"run_exit":{"ended_ms":1764464401000,"exit_code":null,"signal":9,"signal_name":"KILL"},"kernel_events":[{"time_ms":1764464399000,"pid":4243,"event":"oom_killed","line":1,"details":[{"key":"pid","value":"4243","number":true},{"key":"process","value":"python","number":false}]}]},{"id":"run-7-1","name":"","kind":"inference","framework":"","launcher":"","trainer":"","world_size":0,"container_id":"","master_addr":"","master_port":0,"start_time_ms":0,"first_seen_ms":5,"last_seen_ms":6,"ended":false,"processes":[],"run_exit":{"ended_ms":5,"exit_code":3,"signal":0,"signal_name":""},"kernel_events":[]}],"node_events":[{"time_ms":1764464399500,"pid":0,"event":"xid","line":1,"details":[{"key":"xid","value":"79","number":true},{"key":"pci","value":"0000:3b:00","number":false}],"job_id":""},{"time_ms":1764464399000,"pid":4243,"event":"oom_killed","line":1,"details":[{"key":"pid","value":"4243","number":true},{"key":"process","value":"python","number":false}],"job_id":"4242-1764460800000"}]})json";

// The history file the old code wrote (EncodeJobs) for the same two jobs.
constexpr std::string_view kOldHistory =
    R"json({"version":1,"node":"","time_ms":0,"jobs":[{"id":"4242-1764460800000","name":"train \"big\" \\ 模型 \u003cb\u003e\u0026\n","kind":"training","framework":"pytorch","launcher":"torchrun","trainer":"transformers","world_size":2,"container_id":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","master_addr":"10.0.0.1","master_port":29500,"start_time_ms":1764460800000,"first_seen_ms":1764460805000,"last_seen_ms":1764464400000,"ended":true,"processes":[{"pid":4242,"ppid":1,"role":"launcher","rank":-1,"local_rank":-1,"start_time_ms":1764460800000,"cmdline":"torchrun --nproc_per_node 2 train.py"},{"pid":4243,"ppid":4242,"role":"rank","rank":1,"local_rank":1,"start_time_ms":1764460800500,"cmdline":"python train.py"},{"pid":4250,"ppid":4243,"role":"helper","rank":-1,"local_rank":-1,"start_time_ms":1764460801000,"cmdline":"python train.py"}],"run_exit":{"ended_ms":1764464401000,"exit_code":null,"signal":9,"signal_name":"KILL"},"kernel_events":[{"time_ms":1764464399000,"pid":4243,"event":"oom_killed","line":1,"details":[{"key":"pid","value":"4243","number":true},{"key":"process","value":"python","number":false}]}]},{"id":"run-7-1","name":"","kind":"inference","framework":"","launcher":"","trainer":"","world_size":0,"container_id":"","master_addr":"","master_port":0,"start_time_ms":0,"first_seen_ms":5,"last_seen_ms":6,"ended":false,"processes":[],"run_exit":{"ended_ms":5,"exit_code":3,"signal":0,"signal_name":""},"kernel_events":[]}],"node_events":[]})json";

// What this codec writes for a document of the old encoder: the same, with
// the fields added since (a job's owner) at their defaults.
std::string WithNewFields(std::string_view old) {
  std::string out(old);
  const std::string at = R"(,"master_addr":)";
  const std::string owner = R"(,"user":"","uid":-1)";
  for (size_t i = out.find(at); i != std::string::npos; i = out.find(at, i + owner.size() + 1)) {
    out.insert(i, owner);
  }
  return out;
}

KernelEventRecord OomKill() {
  return {1'764'464'399'000,
          4243,
          {"oom_killed", 1, {{"pid", "4243", true}, {"process", "python", false}}}};
}

JobRecord FullJob() {
  JobRecord j;
  j.id = "4242-1764460800000";
  j.name = "train \"big\" \\ 模型 <b>&\n";
  j.kind = "training";
  j.framework = "pytorch";
  j.launcher = "torchrun";
  j.trainer = "transformers";
  j.world_size = 2;
  j.container_id = std::string(64, 'a');
  j.master_addr = "10.0.0.1";
  j.master_port = 29500;
  j.start_time_ms = 1'764'460'800'000;
  j.first_seen_ms = 1'764'460'805'000;
  j.last_seen_ms = 1'764'464'400'000;
  j.ended = true;
  j.processes = {
      {4242, 1, "launcher", -1, -1, 1'764'460'800'000, "torchrun --nproc_per_node 2 train.py"},
      {4243, 4242, "rank", 1, 1, 1'764'460'800'500, "python train.py"},
      {4250, 4243, "helper", -1, -1, 1'764'460'801'000, "python train.py"}};
  j.run_exit = RunExitRecord{1'764'464'401'000, std::nullopt, 9, "KILL"};
  j.kernel_events = {OomKill()};
  return j;
}

JobRecord PlainJob() {
  JobRecord j;
  j.id = "run-7-1";
  j.kind = "inference";
  j.first_seen_ms = 5;
  j.last_seen_ms = 6;
  j.run_exit = RunExitRecord{5, 3, 0, ""};
  return j;
}

JobsSnapshot FullSnapshot() {
  JobsSnapshot s;
  s.node = "gpu-7";
  s.time_ms = 1'764'464'400'000;
  s.jobs = {FullJob(), PlainJob()};
  KernelEventRecord xid{
      1'764'464'399'500, 0, {"xid", 1, {{"xid", "79", true}, {"pci", "0000:3b:00", false}}}};
  s.node_events = {{xid, ""}, {OomKill(), "4242-1764460800000"}};
  return s;
}

JobsSnapshot Decoded(std::string_view json) {
  auto s = DecodeJobsSnapshot(json);
  EXPECT_TRUE(s.ok()) << s.status().ToString() << "\n" << json.substr(0, 400);
  return s.ok() ? *s : JobsSnapshot{};
}

// A snapshot document around `jobs` (the text of the array's elements).
std::string WithJobs(std::string_view jobs) {
  return R"({"version":1,"node":"n","time_ms":1,"jobs":[)" + std::string(jobs) + "]}";
}

std::string Repeat(std::string_view item, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) out += ',';
    out += item;
  }
  return out;
}

std::string Error(std::string_view json) {
  auto s = DecodeJobsSnapshot(json);
  EXPECT_FALSE(s.ok()) << json.substr(0, 400);
  if (s.ok()) return "";
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  return s.status().message();
}

TEST(JobsSnapshotTest, EncodesWhatTheOldEncoderWrote) {
  EXPECT_EQ(EncodeJobsSnapshot(FullSnapshot()), WithNewFields(kOldSnapshot));
  JobsSnapshot history;
  history.jobs = {FullJob(), PlainJob()};
  EXPECT_EQ(EncodeJobsSnapshot(history), WithNewFields(kOldHistory));
}

// Issue 15: a job's owner, after its container (docs/wire.md "Job").
TEST(JobsSnapshotTest, AJobsOwnerIsWrittenAndReadBack) {
  JobsSnapshot in = FullSnapshot();
  in.jobs[0].user = "alice";
  in.jobs[0].uid = 1000;
  const std::string doc = EncodeJobsSnapshot(in);
  EXPECT_NE(doc.find(R"("container_id":")" + std::string(64, 'a') +
                     R"(","user":"alice","uid":1000,"master_addr":)"),
            std::string::npos);
  EXPECT_NE(doc.find(R"("container_id":"","user":"","uid":-1,"master_addr":)"), std::string::npos);
  EXPECT_EQ(Decoded(doc), in);

  // A uid that names no one is unknown; the name is a string like the others.
  JobsSnapshot s = Decoded(WithJobs(
      R"({"id":"a","uid":4294967294},{"id":"b","uid":4294967295},{"id":"c","uid":-2},)"
      R"({"id":"d","uid":"1000","user":7},{"id":"e","uid":0,"user":"root"},)"
      R"({"id":"f","uid":null,"user":null},{"id":"g","uid":1.5},{"id":"h","uid":5,"uid":-1})"));
  ASSERT_EQ(s.jobs.size(), 8u);
  EXPECT_EQ(s.jobs[0].uid, 4294967294);
  for (size_t i : {1, 2, 3, 5, 6, 7}) {
    EXPECT_EQ(s.jobs[i].uid, kUnknownJobUid) << s.jobs[i].id;
    EXPECT_EQ(s.jobs[i].user, "") << s.jobs[i].id;
  }
  EXPECT_EQ(s.jobs[4].uid, 0);
  EXPECT_EQ(s.jobs[4].user, "root");

  // Bounded like every string.
  s = Decoded(
      WithJobs(R"({"id":"a","user":")" + std::string(kMaxJobsStringBytes + 9, 'u') + R"("})"));
  EXPECT_EQ(s.jobs.at(0).user.size(), kMaxJobsStringBytes);
}

TEST(JobsSnapshotTest, EveryFieldSurvivesARoundTrip) {
  JobsSnapshot in = FullSnapshot();
  in.jobs[1].run_exit->exit_code = INT_MIN;
  in.jobs[1].processes = {{INT_MAX, INT_MIN, "future-role", INT_MAX, INT_MIN, INT64_MIN, ""}};
  in.jobs[1].world_size = INT_MIN;
  in.jobs[1].start_time_ms = INT64_MAX;
  in.jobs[1].user = "研究员 \"x\"";
  in.jobs[1].uid = kMaxJobUid;
  in.node_events[0].kernel.event.kind = "a_kind_from_a_newer_agent";
  in.node_events[0].kernel.event.details.push_back({"nul", std::string("a\0b", 3), false});
  EXPECT_EQ(Decoded(EncodeJobsSnapshot(in)), in);
}

TEST(JobsSnapshotTest, OldDocumentsDecodeAndReencodeWithTheNewFieldsOnly) {
  JobsSnapshot s = Decoded(kOldSnapshot);
  EXPECT_EQ(s, FullSnapshot());
  EXPECT_EQ(s.jobs[0].user, "");  // no owner in an old document: unknown
  EXPECT_EQ(s.jobs[0].uid, kUnknownJobUid);
  EXPECT_EQ(EncodeJobsSnapshot(s), WithNewFields(kOldSnapshot));

  JobsSnapshot h = Decoded(kOldHistory);
  EXPECT_EQ(h.node, "");
  EXPECT_EQ(h.time_ms, 0);
  ASSERT_EQ(h.jobs.size(), 2u);
  EXPECT_EQ(h.jobs[0], FullJob());
  EXPECT_FALSE(h.jobs[0].run_exit->exit_code.has_value());
  EXPECT_EQ(h.jobs[1].run_exit->exit_code, 3);
  EXPECT_EQ(EncodeJobsSnapshot(h), WithNewFields(kOldHistory));
}

TEST(JobsSnapshotTest, TheHistoryExampleInTheDocsDecodes) {
  // docs/jobs.md "History": no node, time_ms or node_events.
  JobsSnapshot s = Decoded(R"({"version":1,"jobs":[{"id":"4242-1764460800000","name":"train",
    "kind":"training","framework":"pytorch","launcher":"torchrun","trainer":"","world_size":8,
    "container_id":"","master_addr":"10.0.0.1","master_port":29500,
    "start_time_ms":1764460800000,"first_seen_ms":1764460805000,"last_seen_ms":1764464400000,
    "ended":true,"processes":[{"pid":4242,"ppid":1,"role":"launcher","rank":-1,"local_rank":-1,
    "start_time_ms":1764460800000,"cmdline":"torchrun ... train.py"}],
    "run_exit":{"ended_ms":1764464401000,"exit_code":null,"signal":9,"signal_name":"KILL"},
    "kernel_events":[{"time_ms":1764464399000,"pid":4243,"event":"oom_killed","line":1,
    "details":[{"key":"pid","value":"4243","number":true}]}]}]})");
  EXPECT_EQ(s.node, "");
  ASSERT_EQ(s.jobs.size(), 1u);
  EXPECT_EQ(s.jobs[0].world_size, 8);
  EXPECT_EQ(s.jobs[0].processes.at(0).role, "launcher");
  EXPECT_EQ(s.jobs[0].run_exit->signal_name, "KILL");
  EXPECT_EQ(s.jobs[0].kernel_events.at(0).event.details.at(0).value, "4243");
  EXPECT_TRUE(s.node_events.empty());
}

TEST(JobsSnapshotTest, UnknownFieldsAreIgnoredAtEveryLevel) {
  JobsSnapshot s = Decoded(R"({"version":1,"future":{"a":[1,{"id":"x"}]},"node":"n",
    "jobs":[{"id":"a","gpus":[{"uuid":"GPU-1"}],"processes":[{"pid":1,"env":{"RANK":"0"}}],
      "run_exit":{"ended_ms":2,"core":true},
      "kernel_events":[{"event":"xid","details":[{"key":"k","unit":"s"}],"extra":[[]]}]}],
    "node_events":[{"event":"xid","job_id":"a","seq":7}]})");
  ASSERT_EQ(s.jobs.size(), 1u);
  EXPECT_EQ(s.jobs[0].processes.at(0).pid, 1);
  EXPECT_EQ(s.jobs[0].run_exit->ended_ms, 2);
  EXPECT_EQ(s.jobs[0].kernel_events.at(0).event.details.at(0).key, "k");
  EXPECT_EQ(s.node_events.at(0).job_id, "a");
}

TEST(JobsSnapshotTest, AJobWithoutAnIdAndAnEventWithoutAKindAreSkipped) {
  JobsSnapshot s = Decoded(R"({"version":1,"jobs":[{"name":"no id"},{"id":"","name":"empty"},
    {"id":7},{"id":"ok","kernel_events":[{"line":3},{"event":""},{"event":5},
    {"event":"a_kind_from_a_newer_agent","line":4}]}],
    "node_events":[{"time_ms":1},{"event":"xid","time_ms":2}]})");
  ASSERT_EQ(s.jobs.size(), 1u);
  EXPECT_EQ(s.jobs[0].id, "ok");
  // Kinds are the reader's to map: an unknown one is kept.
  ASSERT_EQ(s.jobs[0].kernel_events.size(), 1u);
  EXPECT_EQ(s.jobs[0].kernel_events[0].event.kind, "a_kind_from_a_newer_agent");
  EXPECT_EQ(s.jobs[0].kernel_events[0].event.line, 4);
  ASSERT_EQ(s.node_events.size(), 1u);
  EXPECT_EQ(s.node_events[0].kernel.time_ms, 2);
}

TEST(JobsSnapshotTest, AFieldOfTheWrongTypeTakesItsDefault) {
  JobsSnapshot s = Decoded(R"({"version":1,"node":5,"time_ms":"5","jobs":[
    {"id":"a","name":["x"],"world_size":2.0,"master_port":true,"ended":"true","start_time_ms":1e3,
     "processes":{"pid":1},"run_exit":[1],"kernel_events":"none"},
    {"id":"b","processes":[7,"x",{"pid":"1","ppid":null,"role":3,"rank":"0","local_rank":0.5}],
     "run_exit":{"ended_ms":null,"exit_code":1.5,"signal":"KILL","signal_name":9},
     "kernel_events":[{"event":"xid","time_ms":[],"pid":{},"line":"1","details":{"key":"x"}},
                      {"event":"xid","details":[{"key":1,"value":2,"number":"yes"},"x",3]}]},
    {"id":"c","run_exit":null}],"node_events":{"event":"xid"}})");
  EXPECT_EQ(s.node, "");
  EXPECT_EQ(s.time_ms, 0);
  ASSERT_EQ(s.jobs.size(), 3u);
  JobRecord a;
  a.id = "a";
  EXPECT_EQ(s.jobs[0], a);
  const JobRecord& b = s.jobs[1];
  ASSERT_EQ(b.processes.size(), 1u);  // the elements that are not objects are skipped
  EXPECT_EQ(b.processes[0], JobProcessRecord{});
  ASSERT_TRUE(b.run_exit.has_value());
  EXPECT_EQ(*b.run_exit, RunExitRecord{});
  ASSERT_EQ(b.kernel_events.size(), 2u);
  EXPECT_EQ(b.kernel_events[0], (KernelEventRecord{0, 0, {"xid", 0, {}}}));
  ASSERT_EQ(b.kernel_events[1].event.details.size(), 1u);
  EXPECT_EQ(b.kernel_events[1].event.details[0], JobEventDetail{});
  EXPECT_FALSE(s.jobs[2].run_exit.has_value());
  EXPECT_TRUE(s.node_events.empty());
}

TEST(JobsSnapshotTest, ARepeatedKeyMeansWhatTheLastOneSays) {
  JobsSnapshot s = Decoded(R"({"version":1,"node":"a","node":"b","jobs":[{"id":"x"}],
    "jobs":[{"id":"y","id":"z","rank":1,"processes":[{"pid":1}],"processes":[],
    "run_exit":{"signal":9},"run_exit":{"ended_ms":3,"exit_code":1,"exit_code":"x"},
    "ended":true,"ended":1}]})");
  EXPECT_EQ(s.node, "b");
  ASSERT_EQ(s.jobs.size(), 1u);
  EXPECT_EQ(s.jobs[0].id, "z");
  EXPECT_TRUE(s.jobs[0].processes.empty());
  EXPECT_EQ(*s.jobs[0].run_exit, (RunExitRecord{3, std::nullopt, 0, ""}));
  EXPECT_FALSE(s.jobs[0].ended);
}

TEST(JobsSnapshotTest, ADocumentThatIsNotASnapshotIsRefused) {
  for (std::string_view bad : {"", " ", "not json", "[]", "5", "null", "\"x\"", "true",
                               R"([{"version":1}])", R"({"version":1} x)", R"({"version":1}{})",
                               R"({"version":1,"jobs":[)", "{\"version\":1,\"node\":\"\xff\"}"}) {
    EXPECT_NE(Error(bad).find("not a jobs document"), std::string::npos) << bad;
  }
  EXPECT_EQ(Error(R"({"version":2,"jobs":[]})"), "jobs document version 2, this Vigil reads 1");
  EXPECT_NE(Error("{}").find("version 0"), std::string::npos);
  EXPECT_NE(Error(R"({"version":"1"})").find("version 0"), std::string::npos);
  EXPECT_NE(Error(R"({"version":1.0})").find("version 0"), std::string::npos);
  EXPECT_NE(Error(R"({"version":18446744073709551615})").find("version 0"), std::string::npos);
}

TEST(JobsSnapshotTest, EveryTruncationIsAnErrorNotACrash) {
  for (size_t n = 0; n < kOldSnapshot.size(); ++n) {
    EXPECT_FALSE(DecodeJobsSnapshot(kOldSnapshot.substr(0, n)).ok()) << n;
  }
}

TEST(JobsSnapshotTest, ParseErrorsAreShortAndSayWhere) {
  // An unterminated string quotes itself in nlohmann's message: cut.
  std::string message = Error(R"({"version":1,"node":")" + std::string(1 << 20, 'a'));
  EXPECT_LT(message.size(), 300u);
  EXPECT_NE(Error(R"({"version":1,})").find("column 14"), std::string::npos);
}

TEST(JobsSnapshotTest, TooBigADocumentIsRefusedUnread) {
  std::string doc = R"({"version":1})";
  doc.append(kMaxJobsSnapshotBytes - doc.size(), ' ');
  EXPECT_TRUE(DecodeJobsSnapshot(doc).ok());
  doc.push_back(' ');
  EXPECT_NE(Error(doc).find("8388609 bytes; at most 8388608"), std::string::npos);
}

TEST(JobsSnapshotTest, DeepNestingIsRefusedBeforeItIsFollowed) {
  auto nested = [](int levels) {
    // The root object is the first level.
    return R"({"version":1,"x":)" + std::string(levels - 1, '[') + std::string(levels - 1, ']') +
           "}";
  };
  EXPECT_TRUE(DecodeJobsSnapshot(nested(kMaxJobsSnapshotDepth)).ok());
  EXPECT_EQ(Error(nested(kMaxJobsSnapshotDepth + 1)), "jobs document nested deeper than 32 levels");
  // Far deeper than any stack would take if it were followed.
  EXPECT_NE(Error(R"({"version":1,"x":)" + std::string(4 << 20, '[')).find("nested deeper"),
            std::string::npos);
  EXPECT_NE(Error(WithJobs(R"({"id":"a","kernel_events":[{"event":"x","details":[{"k":)" +
                           std::string(40, '[')))
                .find("nested deeper"),
            std::string::npos);
}

// The events of `n` kernel events, the i-th on line i, among events without
// a kind (which are skipped and do not count).
std::string Events(size_t n, std::string_view extra = "") {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += R"({"line":99},{"event":"xid","line":)" + std::to_string(i) + std::string(extra) + "},";
  }
  out.pop_back();
  return out;
}

TEST(JobsSnapshotTest, LongListsKeepTheirFirstEntries) {
  JobsSnapshot s =
      Decoded(WithJobs(Repeat(R"({"name":"no id"},{"id":"j"})", kMaxSnapshotJobs + 5)));
  EXPECT_EQ(s.jobs.size(), kMaxSnapshotJobs);  // jobs without an id do not count

  s = Decoded(WithJobs(R"({"id":"a","processes":[)" + Repeat(R"({"pid":1})", kMaxJobProcesses) +
                       R"(,{"pid":2}]})"));
  ASSERT_EQ(s.jobs.at(0).processes.size(), kMaxJobProcesses);
  EXPECT_EQ(s.jobs[0].processes.back().pid, 1);

  s = Decoded(R"({"version":1,"node_events":[{"event":"xid","details":[)" +
              Repeat(R"({"key":"k"})", kMaxJobEventDetails) + R"(,{"key":"last"}]}]})");
  ASSERT_EQ(s.node_events.at(0).kernel.event.details.size(), kMaxJobEventDetails);
  EXPECT_EQ(s.node_events[0].kernel.event.details.back().key, "k");
}

TEST(JobsSnapshotTest, LongListsOfEventsKeepTheNewest) {
  // Oldest first, as a tracker keeps them (and drops the oldest).
  for (size_t n : {kMaxJobKernelEvents - 1, kMaxJobKernelEvents, kMaxJobKernelEvents + 1,
                   3 * kMaxJobKernelEvents + 5}) {
    JobsSnapshot s = Decoded(WithJobs(R"({"id":"a","kernel_events":[)" + Events(n) + "]}"));
    const auto& events = s.jobs.at(0).kernel_events;
    ASSERT_EQ(events.size(), std::min(n, kMaxJobKernelEvents)) << n;
    for (size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(events[i].event.line, static_cast<int64_t>(n - events.size() + i)) << n;
    }
  }
  const size_t n = kMaxNodeKernelEvents + 7;
  JobsSnapshot s = Decoded(R"({"version":1,"node_events":[)" + Events(n, R"(,"job_id":"")") + "]}");
  ASSERT_EQ(s.node_events.size(), kMaxNodeKernelEvents);
  EXPECT_EQ(s.node_events.front().kernel.event.line, 7);
  EXPECT_EQ(s.node_events.back().kernel.event.line, static_cast<int64_t>(n - 1));
  // A repeated key starts the list again.
  s = Decoded(WithJobs(R"({"id":"a","kernel_events":[)" + Events(40) + R"(],"kernel_events":[)" +
                       Events(2) + "]}"));
  ASSERT_EQ(s.jobs.at(0).kernel_events.size(), 2u);
  EXPECT_EQ(s.jobs[0].kernel_events[1].event.line, 1);
}

TEST(JobsSnapshotTest, TooManyRecordsInAllIsRefused) {
  // Every list within its own bound, but far more records than any node has.
  const std::string job = R"({"id":"a","processes":[)" + Repeat("{}", kMaxJobProcesses) + "]}";
  const size_t jobs = kMaxJobsSnapshotRecords / (kMaxJobProcesses + 1) + 1;
  EXPECT_NE(Error(WithJobs(Repeat(job, jobs))).find("more than 262144 records"), std::string::npos);
  EXPECT_EQ(Decoded(WithJobs(Repeat(job, jobs - 1))).jobs.size(), jobs - 1);
}

TEST(JobsSnapshotTest, LongStringsAreCutAtACharacterAndLongIdsSkipped) {
  const std::string odd = "a" + [] {
    std::string s;
    for (int i = 0; i < 2500; ++i) s += "é";
    return s;
  }();
  JobsSnapshot s = Decoded(WithJobs(R"({"id":"a","processes":[{"cmdline":")" + odd + R"("}]})"));
  const std::string& cmdline = s.jobs.at(0).processes.at(0).cmdline;
  EXPECT_EQ(cmdline.size(), kMaxJobsStringBytes - 1);  // the cut é is left out whole
  EXPECT_EQ(cmdline, odd.substr(0, kMaxJobsStringBytes - 1));

  const std::string longest(kMaxJobsStringBytes, 'i');
  s = Decoded(WithJobs(R"({"id":")" + longest + R"("},{"id":")" + longest + R"(i"})"));
  ASSERT_EQ(s.jobs.size(), 1u);
  EXPECT_EQ(s.jobs[0].id, longest);

  s = Decoded(R"({"version":1,"node_events":[{"event":"xid","job_id":")" + longest +
              R"(i"},{"event":"xid","job_id":")" + longest + R"("}]})");
  ASSERT_EQ(s.node_events.size(), 1u);
  EXPECT_EQ(s.node_events[0].job_id, longest);

  // A node's name is its identity: too long a name refuses the snapshot.
  EXPECT_EQ(Decoded(R"({"version":1,"node":")" + std::string(kMaxJobsNodeBytes, 'n') + R"("})")
                .node.size(),
            kMaxJobsNodeBytes);
  EXPECT_EQ(Error(R"({"version":1,"node":")" + std::string(kMaxJobsNodeBytes + 1, 'n') + R"("})"),
            "jobs document names a node of 254 bytes; at most 253");
}

TEST(JobsSnapshotTest, NumbersOutOfTheirFieldsRangeTakeTheDefault) {
  JobsSnapshot s = Decoded(R"({"version":1,"time_ms":9223372036854775808,"jobs":[
    {"id":"a","start_time_ms":9223372036854775807,"first_seen_ms":-9223372036854775808,
     "last_seen_ms":18446744073709551615,"world_size":2147483648,"master_port":-2147483649,
     "processes":[{"pid":2147483647,"ppid":-2147483648,"rank":2147483648,"local_rank":-2147483649,
                   "start_time_ms":99999999999999999999}],
     "run_exit":{"exit_code":4294967296,"signal":-1},
     "kernel_events":[{"event":"xid","pid":4294967295,"line":-1}]},
    {"id":"b","run_exit":{"exit_code":-2147483648}}]})");
  EXPECT_EQ(s.time_ms, 0);
  ASSERT_EQ(s.jobs.size(), 2u);
  const JobRecord& a = s.jobs[0];
  EXPECT_EQ(a.start_time_ms, INT64_MAX);
  EXPECT_EQ(a.first_seen_ms, INT64_MIN);
  EXPECT_EQ(a.last_seen_ms, 0);
  EXPECT_EQ(a.world_size, 0);
  EXPECT_EQ(a.master_port, 0);
  EXPECT_EQ(a.processes.at(0), (JobProcessRecord{INT_MAX, INT_MIN, "", -1, -1, 0, ""}));
  EXPECT_EQ(*a.run_exit, (RunExitRecord{0, std::nullopt, -1, ""}));
  EXPECT_EQ(a.kernel_events.at(0).pid, 0);
  EXPECT_EQ(a.kernel_events.at(0).event.line, -1);
  EXPECT_EQ(s.jobs[1].run_exit->exit_code, INT_MIN);
  // Beyond a double, nlohmann refuses the text.
  EXPECT_NE(Error(R"({"version":1,"time_ms":1e400})").find("not JSON"), std::string::npos);
}

TEST(JobsSnapshotTest, JobsKeyIsTheOneTheOldCodeComputed) {
  EXPECT_EQ(JobsKey({FullJob(), PlainJob()}),
            "4242-1764460800000:e1764464400000:x1764464401000:k1;run-7-1:r:x5:k0;");
  JobRecord running = FullJob();
  running.ended = false;
  JobRecord later = running;
  later.last_seen_ms += 5000;  // moves at every pass: not substance
  EXPECT_EQ(JobsKey({running}), JobsKey({later}));
  later.kernel_events.push_back(OomKill());
  EXPECT_NE(JobsKey({running}), JobsKey({later}));
}

}  // namespace
}  // namespace vigil::wire
