#include "collect/logs/checkpoint.h"

#include <gtest/gtest.h>

#include <random>

#include "core/env_wrapper.h"
#include "core/temp_dir.h"

namespace vigil::collect::logs {
namespace {

SourceCheckpoint Cp(std::string path, uint64_t ino, uint64_t gen, uint64_t offset) {
  SourceCheckpoint cp;
  cp.path = std::move(path);
  cp.identity = {.dev = 2049,
                 .ino = ino,
                 .fp = 0xdeadbeef00112233ull + ino,
                 .fp_len = 1024,
                 .generation = gen};
  cp.offset = offset;
  return cp;
}

class ClockEnv : public EnvWrapper {
 public:
  ClockEnv() : EnvWrapper(Env::Default()) {}
  int64_t NowMillis() override { return ++now_; }
  int64_t MonotonicMillis() override { return mono_ms; }
  Status WriteFileAtomic(const std::string& p, std::string_view d) override {
    if (fail_writes) return IoError("disk full (injected)");
    ++writes;
    return EnvWrapper::WriteFileAtomic(p, d);
  }
  bool fail_writes = false;
  int writes = 0;
  int64_t mono_ms = 5000;

 private:
  int64_t now_ = 1000;
};

TEST(CheckpointTest, SourceIdFormat) {
  SourceIdentity id{.dev = 64769, .ino = 1234, .fp = 0xabc, .fp_len = 10, .generation = 2};
  EXPECT_EQ(id.SourceId(), "file:64769:1234:0000000000000abc:2");
}

TEST(CheckpointTest, EncodeDecodeRoundTripWithOddPaths) {
  std::vector<SourceCheckpoint> cps = {Cp("/var/log/a b%c\n\td.log", 1, 0, 10),
                                       Cp("/x", 2, 7, 1ull << 40)};
  cps[1].resume = ResumeState::kSkipToNewline;
  cps[1].updated_ms = 42;
  auto out = DecodeCheckpoints(EncodeCheckpoints(cps));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, cps);
}

TEST(CheckpointTest, DecodeRejectsDamageAndNeverCrashes) {
  std::string good = EncodeCheckpoints(std::vector<SourceCheckpoint>{Cp("/a", 1, 0, 5)});
  EXPECT_FALSE(DecodeCheckpoints("").ok());
  EXPECT_FALSE(DecodeCheckpoints(good.substr(0, good.size() - 3)).ok());
  std::string flipped = good;
  flipped[30] ^= 1;
  EXPECT_EQ(DecodeCheckpoints(flipped).status().code(), StatusCode::kCorruption);
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string s = good;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) s[rng() % s.size()] = static_cast<char>(rng());
    if (rng() % 3 == 0) s.resize(rng() % (s.size() + 1));
    (void)DecodeCheckpoints(s);  // must not crash
  }
}

TEST(CheckpointTest, CommitPersistsAndNeverGoesBackwards) {
  TempDir tmp;
  ClockEnv env;
  {
    auto store = CheckpointStore::Open(&env, tmp.Join("state"));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->Commit(Cp("/a.log", 1, 0, 100)).ok());
    ASSERT_TRUE((*store)->Commit(Cp("/a.log", 1, 0, 50)).ok());  // stale ack: ignored
    EXPECT_EQ((*store)->Get(Cp("/a.log", 1, 0, 0).source_id())->offset, 100u);
    ASSERT_TRUE((*store)->Commit(Cp("/a.log", 2, 0, 7)).ok());
    ASSERT_TRUE((*store)->Commit(Cp("/b.log", 3, 0, 9)).ok());
  }
  auto store = CheckpointStore::Open(&env, tmp.Join("state"));
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->size(), 3u);
  auto a = (*store)->ForPath("/a.log");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].identity.ino, 1u);  // oldest update first
  EXPECT_EQ(a[0].offset, 100u);
  EXPECT_EQ(a[1].offset, 7u);
  ASSERT_TRUE((*store)->Forget(a[0].source_id()).ok());
  ASSERT_TRUE((*store)->Forget("file:unknown").ok());
  auto again = CheckpointStore::Open(&env, tmp.Join("state"));
  EXPECT_EQ((*again)->size(), 2u);
  EXPECT_FALSE((*again)->Get(a[0].source_id()).has_value());
}

// Acknowledged offsets may lag on disk by the interval (the server drops
// what a restarted agent reads again); a deferred commit is never dropped:
// the next due write, Flush or immediate commit carries it.
TEST(CheckpointTest, DeferredCommitsAreWrittenOncePerIntervalAndOnFlush) {
  TempDir tmp;
  ClockEnv env;
  auto store = CheckpointStore::Open(&env, tmp.path(), {.ack_persist_interval_ms = 1000});
  ASSERT_TRUE(store.ok());
  auto reopened_offset = [&] {
    auto again = CheckpointStore::Open(Env::Default(), tmp.path());
    EXPECT_TRUE(again.ok());
    auto got = (*again)->Get(Cp("/a", 1, 0, 0).source_id());
    return got ? got->offset : 0;
  };
  SourceCheckpoint cp = Cp("/a", 1, 0, 100);
  ASSERT_TRUE((*store)->CommitMany({&cp, 1}, Persist::kWhenDue).ok());  // first: due at once
  EXPECT_EQ(env.writes, 1);
  cp.offset = 200;
  ASSERT_TRUE((*store)->CommitMany({&cp, 1}, Persist::kWhenDue).ok());
  cp.offset = 300;
  ASSERT_TRUE((*store)->CommitMany({&cp, 1}, Persist::kWhenDue).ok());
  EXPECT_EQ(env.writes, 1);
  EXPECT_TRUE((*store)->dirty());
  EXPECT_EQ((*store)->Get(cp.source_id())->offset, 300u);  // in memory at once
  EXPECT_EQ(reopened_offset(), 100u);                      // on disk: lags

  env.mono_ms += 999;
  ASSERT_TRUE((*store)->PersistIfDue().ok());
  EXPECT_EQ(env.writes, 1);
  env.mono_ms += 1;
  ASSERT_TRUE((*store)->PersistIfDue().ok());
  EXPECT_EQ(env.writes, 2);
  EXPECT_EQ(reopened_offset(), 300u);
  EXPECT_FALSE((*store)->dirty());
  ASSERT_TRUE((*store)->PersistIfDue().ok());  // nothing waits: no write
  EXPECT_EQ(env.writes, 2);

  cp.offset = 400;
  ASSERT_TRUE((*store)->CommitMany({&cp, 1}, Persist::kWhenDue).ok());
  EXPECT_EQ(env.writes, 2);
  ASSERT_TRUE((*store)->Flush().ok());
  EXPECT_EQ(env.writes, 3);
  EXPECT_EQ(reopened_offset(), 400u);
  // A commit that must be durable now is, whatever the interval.
  cp.offset = 500;
  ASSERT_TRUE((*store)->CommitMany({&cp, 1}).ok());
  EXPECT_EQ(env.writes, 4);
  EXPECT_EQ(reopened_offset(), 500u);
}

TEST(CheckpointTest, CorruptFileIsMovedAsideAndStoreStartsEmpty) {
  TempDir tmp;
  Env* env = Env::Default();
  ASSERT_TRUE(env->CreateDirs(tmp.Join("s")).ok());
  ASSERT_TRUE(env->WriteFileAtomic(tmp.Join("s/tail-checkpoints"), "garbage\n").ok());
  auto store = CheckpointStore::Open(env, tmp.Join("s"));
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE((*store)->recovered_from_corruption());
  EXPECT_EQ((*store)->size(), 0u);
  EXPECT_TRUE(env->FileExists(tmp.Join("s/tail-checkpoints.corrupt")));
}

TEST(CheckpointTest, LeftoverTempFileFromAKilledWriteIsIgnored) {
  // kill -9 during WriteFileAtomic leaves at most a partial .tmp; the real
  // file holds the previous commit.
  TempDir tmp;
  Env* env = Env::Default();
  {
    auto store = CheckpointStore::Open(env, tmp.path());
    ASSERT_TRUE((*store)->Commit(Cp("/a", 1, 0, 10)).ok());
  }
  ASSERT_TRUE(env->WriteFileAtomic(tmp.Join("tail-checkpoints.tmp.x"), "vigil-tail-chec").ok());
  ASSERT_TRUE(
      env->RenameFile(tmp.Join("tail-checkpoints.tmp.x"), tmp.Join("tail-checkpoints.tmp")).ok());
  auto store = CheckpointStore::Open(env, tmp.path());
  ASSERT_TRUE(store.ok());
  EXPECT_FALSE((*store)->recovered_from_corruption());
  EXPECT_EQ((*store)->Get(Cp("/a", 1, 0, 0).source_id())->offset, 10u);
}

TEST(CheckpointTest, FailedWriteReportsErrorAndKeepsOldFile) {
  TempDir tmp;
  ClockEnv env;
  auto store = CheckpointStore::Open(&env, tmp.path());
  ASSERT_TRUE((*store)->Commit(Cp("/a", 1, 0, 10)).ok());
  env.fail_writes = true;
  EXPECT_EQ((*store)->Commit(Cp("/a", 1, 0, 20)).code(), StatusCode::kIoError);
  env.fail_writes = false;
  auto reopened = CheckpointStore::Open(&env, tmp.path());
  EXPECT_EQ((*reopened)->Get(Cp("/a", 1, 0, 0).source_id())->offset, 10u);
}

TEST(CheckpointTest, BoundedByMaxEntriesDroppingLeastRecentlyUpdated) {
  TempDir tmp;
  ClockEnv env;
  auto store = CheckpointStore::Open(&env, tmp.path(), {.max_entries = 3});
  for (uint64_t i = 1; i <= 5; ++i) ASSERT_TRUE((*store)->Commit(Cp("/a", i, 0, i)).ok());
  EXPECT_EQ((*store)->size(), 3u);
  EXPECT_FALSE((*store)->Get(Cp("/a", 1, 0, 0).source_id()).has_value());
  EXPECT_FALSE((*store)->Get(Cp("/a", 2, 0, 0).source_id()).has_value());
  EXPECT_TRUE((*store)->Get(Cp("/a", 5, 0, 0).source_id()).has_value());
}

TEST(CheckpointTest, RejectsBadInput) {
  TempDir tmp;
  auto store = CheckpointStore::Open(Env::Default(), tmp.path());
  EXPECT_FALSE((*store)->Commit(Cp("", 1, 0, 1)).ok());
  EXPECT_FALSE(CheckpointStore::Open(Env::Default(), tmp.path(), {.max_entries = 0}).ok());
}

}  // namespace
}  // namespace vigil::collect::logs
