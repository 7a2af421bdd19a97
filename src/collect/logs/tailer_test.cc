#include "collect/logs/tailer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <set>

#include "collect/logs/tailer_siblings.h"
#include "collect/logs/tailer_test_util.h"
#include "core/temp_dir.h"
#include "wire/log_batch.h"

#ifdef VIGIL_HAVE_ZLIB
#include <zlib.h>
#endif

namespace vigil::collect::logs {
namespace {

using namespace vigil::collect::logs::tailtest;  // NOLINT: test helpers

TEST_F(TailerTest, CompleteLinesWithOffsetsAndPartialHeld) {
  Writer w(path_);
  w.Write("a\nbb\nccc");
  auto t = FileTailer::Open(path_, Fast(&env_));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto c = (*t)->ReadSome(1 << 20);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->lines.size(), 2u);
  EXPECT_EQ(c->lines[0], (RawLine{0, "a", 0, c->lines[0].read_time_ns}));
  EXPECT_EQ(c->lines[1].offset, 2u);
  EXPECT_EQ(c->lines[1].bytes, "bb");
  EXPECT_GT(c->lines[0].read_time_ns, 0);
  EXPECT_EQ(c->start_offset, 0u);
  EXPECT_EQ(c->end_offset, 5u);  // not past the held "ccc"
  EXPECT_TRUE(c->first_of_source);
  EXPECT_TRUE(c->source_id.starts_with("file:"));
  EXPECT_TRUE(c->source_id.ends_with(":0"));
  EXPECT_TRUE((*t)->ReadSome(100)->empty());
  w.Write("c\n");
  c = (*t)->ReadSome(100);
  ASSERT_EQ(c->lines.size(), 1u);
  EXPECT_EQ(c->lines[0].bytes, "cccc");
  EXPECT_EQ(c->lines[0].offset, 5u);
  EXPECT_EQ(c->start_offset, 5u);
  EXPECT_EQ(c->end_offset, 10u);
  EXPECT_FALSE(c->first_of_source);
}

TEST_F(TailerTest, StripsCarriageReturnOnlyBeforeNewline) {
  Writer w(path_);
  w.Write("a\r\nb\rc\r\n\r\n\rd\n");
  auto t = FileTailer::Open(path_, Fast(&env_));
  auto got = Drain(**t).lines;
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b\rc", "", "\rd"}));
  // "\r" then "\n" in separate writes is still a "\r\n".
  w.Write("e\r");
  EXPECT_TRUE(Drain(**t).lines.empty());
  w.Write("\n");
  EXPECT_EQ(Drain(**t).lines, std::vector<std::string>{"e"});
}

TEST_F(TailerTest, PartialLineFlushedAfterTimeoutWithoutGrowth) {
  Writer w(path_);
  w.Write("abc");
  auto t = FileTailer::Open(path_, Fast(&env_));
  EXPECT_TRUE((*t)->ReadSome(100)->empty());
  env_.now_ms += 4999;
  EXPECT_TRUE((*t)->ReadSome(100)->empty());
  w.Write("d\r");  // growth restarts the wait
  env_.now_ms += 4999;
  EXPECT_TRUE((*t)->ReadSome(100)->empty());
  env_.now_ms += 4999;
  EXPECT_TRUE((*t)->ReadSome(100)->empty());
  env_.now_ms += 1;
  auto c = (*t)->ReadSome(100);
  ASSERT_EQ(c->lines.size(), 1u);
  EXPECT_EQ(c->lines[0].bytes, "abcd\r");  // a lone '\r' is kept
  EXPECT_EQ(c->lines[0].flags, wire::kLogFlagPartial);
  EXPECT_EQ(c->end_offset, 5u);
  EXPECT_EQ(c->end_resume, ResumeState::kAfterPartial);
  // The newline that completes the flushed line makes no empty line.
  w.Write("\nnext\n");
  c = (*t)->ReadSome(100);
  ASSERT_EQ(c->lines.size(), 1u);
  EXPECT_EQ(c->lines[0].bytes, "next");
  EXPECT_EQ(c->lines[0].offset, 6u);
  EXPECT_EQ((*t)->stats().partial_lines, 1u);
}

TEST_F(TailerTest, HugeLineIsCutFlaggedAndTheFileGoesOn) {
  Writer w(path_);
  const size_t kMax = 1u << 20;
  std::string huge(5u << 20, 'x');
  for (size_t i = 0; i < huge.size(); i += 4096) huge[i] = static_cast<char>('a' + i % 26);
  w.Write("first\n");
  auto t = FileTailer::Open(path_, Fast(&env_));
  std::vector<RawLine> lines;
  uint64_t max_range = 0, last_end = 0;
  int calls = 0;
  // The huge line arrives in pieces, newline last: the head must be emitted
  // before the newline exists (memory stays bounded), the rest skipped.
  for (size_t off = 0; off < huge.size(); off += 512 * 1024) {
    w.Write(huge.substr(off, 512 * 1024));
    for (;;) {
      auto c = (*t)->ReadSome(64 * 1024);
      ASSERT_TRUE(c.ok());
      ++calls;
      if (c->empty()) break;
      EXPECT_EQ(c->start_offset, last_end);
      last_end = c->end_offset;
      max_range = std::max(max_range, c->end_offset - c->start_offset);
      for (auto& l : c->lines) lines.push_back(l);
    }
  }
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].offset, 6u);
  EXPECT_EQ(lines[1].bytes, huge.substr(0, kMax));
  EXPECT_EQ(lines[1].flags, wire::kLogFlagTruncated);
  EXPECT_EQ(last_end, 6u + huge.size());  // skipped bytes are consumed
  w.Write("\nafter 1\nafter 2\n");
  auto rest = Drain(**t);
  EXPECT_EQ(rest.lines, (std::vector<std::string>{"after 1", "after 2"}));
  EXPECT_EQ(rest.chunks.front().lines[0].offset, 6u + huge.size() + 1);
  // Never the whole line in one read: each chunk covers at most the cap plus
  // one read block.
  EXPECT_LE(max_range, kMax + 128 * 1024);
  EXPECT_GT(calls, 40);
  EXPECT_EQ((*t)->stats().truncated_lines, 1u);
}

TEST_F(TailerTest, LineOfExactlyTheCapWithCrLfIsNotTruncated) {
  Writer w(path_);
  TailerOptions o = Fast(&env_);
  o.max_line_bytes = 8;
  w.Write("12345678\r");
  auto t = FileTailer::Open(path_, o);
  EXPECT_TRUE(Drain(**t).lines.empty());
  w.Write("\n123456789\nabc\n");
  auto c = Drain(**t);
  ASSERT_EQ(c.lines, (std::vector<std::string>{"12345678", "12345678", "abc"}));
  EXPECT_EQ(c.chunks[0].lines[0].flags, 0);
  EXPECT_EQ(c.chunks[0].lines[1].flags, wire::kLogFlagTruncated);
  EXPECT_EQ(c.chunks[0].lines[2].offset, 20u);
}

TEST_F(TailerTest, RenameRotationReadsOldFileToItsEndThenTheNewOne) {
  TailerOptions o = Fast(&env_);
  o.rotate_wait_ms = 5000;
  auto w = std::make_unique<Writer>(path_);
  w->Write(Numbered(1, 100));
  auto t = FileTailer::Open(path_, o);
  auto first = Drain(**t);
  EXPECT_EQ(first.lines, NumberedLines(1, 100));
  std::string old_id = first.chunks[0].source_id;
  // logrotate: rename, create; the application writes a few more lines to
  // the old file before it reopens its log.
  ASSERT_EQ(::rename(path_.c_str(), (path_ + ".1").c_str()), 0);
  w->Write(Numbered(101, 110));
  Writer w2(path_);
  w2.Write(Numbered(111, 150));
  auto second = Drain(**t);
  w->Write(Numbered(151, 155));  // later still, within rotate_wait
  auto third = Drain(**t);
  EXPECT_EQ(second.lines, [] {
    auto v = NumberedLines(101, 110);
    auto n = NumberedLines(111, 150);
    v.insert(v.end(), n.begin(), n.end());
    return v;
  }());
  EXPECT_EQ(third.lines, NumberedLines(151, 155));
  EXPECT_EQ(third.chunks[0].source_id, old_id);
  EXPECT_EQ(second.chunks[0].source_id, old_id);
  EXPECT_EQ(second.chunks[0].lines[0].offset, Numbered(1, 100).size());
  std::string new_id = second.chunks.back().source_id;
  EXPECT_NE(new_id, old_id);
  EXPECT_EQ(second.chunks.back().lines.back().offset, Numbered(111, 149).size());
  EXPECT_TRUE(second.chunks.back().first_of_source);
  EXPECT_EQ((*t)->OpenSourceIds(), (std::vector<std::string>{old_id, new_id}));
  // After rotate_wait without growth the old file is finished.
  env_.now_ms += 5000;
  auto fin = (*t)->ReadSome(100);
  ASSERT_TRUE(fin.ok());
  EXPECT_EQ(fin->source_id, old_id);
  EXPECT_EQ(fin->finished_sources, std::vector<std::string>{old_id});
  EXPECT_EQ(fin->end_offset, Numbered(1, 110).size() + Numbered(151, 155).size());
  EXPECT_EQ((*t)->OpenSourceIds(), std::vector<std::string>{new_id});
  EXPECT_EQ((*t)->stats().rotations, 1u);
}

TEST_F(TailerTest, CopyTruncateStartsANewGeneration) {
  Writer w(path_);
  w.Write(Numbered(1, 50));
  auto t = FileTailer::Open(path_, Fast(&env_));
  auto a = Drain(**t);
  std::string gen0 = a.chunks[0].source_id;
  EXPECT_TRUE(gen0.ends_with(":0"));
  std::filesystem::copy_file(path_, path_ + ".1");
  ASSERT_EQ(::truncate(path_.c_str(), 0), 0);
  w.Write(Numbered(51, 60));  // O_APPEND: written from offset 0
  auto b = Drain(**t);
  ASSERT_GE(b.chunks.size(), 2u);
  EXPECT_EQ(b.chunks[0].source_id, gen0);
  EXPECT_EQ(b.chunks[0].finished_sources, std::vector<std::string>{gen0});
  EXPECT_TRUE(b.chunks[0].lines.empty());
  EXPECT_TRUE(b.chunks[1].source_id.ends_with(":1"));
  EXPECT_EQ(b.chunks[1].lines[0].offset, 0u);
  EXPECT_EQ(b.lines, NumberedLines(51, 60));
  EXPECT_EQ((*t)->stats().truncations, 1u);
}

TEST_F(TailerTest, TruncationRewrittenPastOurOffsetIsCaughtByTheFingerprint) {
  Writer w(path_);
  w.Write("short\n");
  auto t = FileTailer::Open(path_, Fast(&env_));
  EXPECT_EQ(Drain(**t).lines, std::vector<std::string>{"short"});
  ASSERT_EQ(::truncate(path_.c_str(), 0), 0);
  w.Write(Numbered(1, 20));  // longer than what we had read
  auto b = Drain(**t);
  EXPECT_EQ(b.lines, NumberedLines(1, 20));
  EXPECT_TRUE(b.chunks[0].finished());
  EXPECT_TRUE(b.chunks.back().source_id.ends_with(":1"));
}

TEST_F(TailerTest, DeletedWhileOpenIsReadToItsEndThenFinished) {
  auto w = std::make_unique<Writer>(path_);
  w->Write(Numbered(1, 10));
  auto t = FileTailer::Open(path_, Fast(&env_));
  auto c = (*t)->ReadSome(20);  // only part of it
  ASSERT_TRUE(c.ok());
  std::string id = c->source_id;
  ASSERT_EQ(::unlink(path_.c_str()), 0);
  w->Write(Numbered(11, 12) + "tail-without-newline");
  auto rest = Drain(**t);
  std::vector<std::string> all;
  for (auto& l : c->lines) all.push_back(l.bytes);
  all.insert(all.end(), rest.lines.begin(), rest.lines.end());
  auto want = NumberedLines(1, 12);
  want.push_back("tail-without-newline");
  EXPECT_EQ(all, want);
  EXPECT_EQ(rest.chunks.back().finished_sources, std::vector<std::string>{id});
  EXPECT_EQ(rest.chunks.back().lines.back().flags, wire::kLogFlagPartial);
  EXPECT_FALSE((*t)->HasOpenSources());
  // The path coming back is followed again, as a new source.
  Writer w2(path_);
  w2.Write("again\n");
  auto again = Drain(**t);
  EXPECT_EQ(again.lines, std::vector<std::string>{"again"});
  EXPECT_NE(again.chunks[0].source_id, id);
}

TEST_F(TailerTest, MissingPathIsFollowedOnceItAppears) {
  auto t = FileTailer::Open(path_, Fast(&env_));
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE((*t)->ReadSome(100)->empty());
  EXPECT_FALSE((*t)->HasOpenSources());
  Writer w(path_);
  w.Write("hello\n");
  EXPECT_EQ(Drain(**t).lines, std::vector<std::string>{"hello"});
}

TEST_F(TailerTest, StartAtEndSkipsExistingContentAndItsOpenLine) {
  Writer w(path_);
  w.Write("old 1\nold 2\nhalf of ");
  TailerOptions o = Fast(&env_);
  o.start_at_end = true;
  auto t = FileTailer::Open(path_, o);
  w.Write("an old line\nnew 1\n");
  auto c = Drain(**t);
  EXPECT_EQ(c.lines, std::vector<std::string>{"new 1"});
}

TEST_F(TailerTest, CompressedRotatedFilesAreNeverOpened) {
  // The name rules themselves are discovery's (discover/log_sources.h).
  Writer w(path_ + ".1.gz");
  w.Write("\x1f\x8b binary\n");
  auto t = FileTailer::Open(path_ + ".1.gz", Fast(&env_));
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(FileTailer::Open(tmp_.path(), Fast(&env_)).ok());  // a directory
}

// --- copytruncate: the copy holds what we had not read ---

std::vector<std::string> Joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void CopyFile(const std::string& from, const std::string& to, size_t max = SIZE_MAX) {
  auto text = Env::Default()->ReadFile(from, 1 << 24);
  ASSERT_TRUE(text.ok());
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(to, std::string_view(*text).substr(0, max)).ok());
}

void SetMtime(const std::string& path, int64_t unix_ms) {
  struct timespec ts[2];
  ts[0].tv_sec = ts[1].tv_sec = unix_ms / 1000;
  ts[0].tv_nsec = ts[1].tv_nsec = (unix_ms % 1000) * 1000000;
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), ts, 0), 0);
}

TEST(RotatedSiblingName, TheSchemesRotatorsUse) {
  for (const char* yes : {"app.log.1", "app.log.12", "app.log-20261201", "app.log.2026-12-01",
                          "app.log_2026-12-01T10:00:00Z", "app.log.1.gz", "app.log-20261201.xz",
                          "app-20261201.log", "app.1.log"}) {
    EXPECT_TRUE(IsRotatedSiblingName("app.log", yes)) << yes;
  }
  for (const char* no : {"app.log", "app.log.", "app.log.bak", "app.log.old", "app.logx.1",
                         "other.log.1", "app.log.1.txt", "app-x.log", "app.log.gz", "app.log1"}) {
    EXPECT_FALSE(IsRotatedSiblingName("app.log", no)) << no;
  }
  EXPECT_TRUE(IsRotatedSiblingName("stdout", "stdout.1"));
  EXPECT_FALSE(IsRotatedSiblingName("stdout", "stdout"));
}

TEST_F(TailerTest, CopyTruncateReadsTheUnreadLinesFromTheCopy) {
  TailerOptions o = Fast(&env_);
  o.rotate_wait_ms = 5000;  // a copy is finished at its end all the same
  Writer w(path_);
  w.Write(Numbered(1, 50));
  auto t = FileTailer::Open(path_, o);
  auto a = Drain(**t);
  std::string gen0 = a.chunks[0].source_id;
  w.Write(Numbered(51, 80));  // not read before the rotation
  w.Write("line 81 held");    // nor this line, still without its newline
  w.Write(" whole\n");
  CopyFile(path_, path_ + ".1");
  ASSERT_EQ(::truncate(path_.c_str(), 0), 0);
  w.Write(Numbered(82, 90));
  auto b = Drain(**t);
  auto want = NumberedLines(51, 80);
  want.push_back("line 81 held whole");
  EXPECT_EQ(b.lines, Joined(want, NumberedLines(82, 90)));
  // The copy's lines continue the old generation's offsets; then it ends.
  EXPECT_EQ(b.chunks[0].source_id, gen0);
  EXPECT_EQ(b.chunks[0].lines[0].offset, Numbered(1, 50).size());
  EXPECT_FALSE(b.chunks[0].first_of_source);
  size_t fin = 0;
  while (fin < b.chunks.size() && !b.chunks[fin].finished()) ++fin;
  ASSERT_LT(fin, b.chunks.size());
  EXPECT_EQ(b.chunks[fin].finished_sources, std::vector<std::string>{gen0});
  for (size_t i = 0; i <= fin; ++i) EXPECT_EQ(b.chunks[i].source_id, gen0) << i;
  EXPECT_TRUE(b.chunks.back().source_id.ends_with(":1"));
  EXPECT_EQ((*t)->stats().copies_read, 1u);
  EXPECT_EQ((*t)->stats().lost_truncations, 0u);
  for (const auto& c : b.chunks) EXPECT_TRUE(c.lost.empty());
}

// A truncation where the tailer had seen more bytes than it read: what no
// copy holds is reported with its size, never dropped silently.
Collected TruncateHalfRead(FileTailer& t, Writer& w, const std::string& path,
                           const std::function<void()>& make_copy) {
  w.Write(Numbered(1, 100));
  auto first = t.ReadSome(200);  // sees the whole file, reads about 200 bytes
  EXPECT_TRUE(first.ok());
  make_copy();
  EXPECT_EQ(::truncate(path.c_str(), 0), 0);
  w.Write(Numbered(101, 105));
  Collected rest = Drain(t);
  rest.lines.insert(rest.lines.begin(), "-");  // marks where the first read ended
  for (auto it = first->lines.rbegin(); it != first->lines.rend(); ++it) {
    rest.lines.insert(rest.lines.begin(), it->bytes);
  }
  return rest;
}

uint64_t LostBytes(const Collected& c) {
  uint64_t n = 0;
  for (const auto& chunk : c.chunks) {
    for (const auto& l : chunk.lost) n += l.lost_bytes;
  }
  return n;
}

TEST_F(TailerTest, CopyShorterThanOurOffsetIsNotTheCopy) {
  Writer w(path_);
  auto t = FileTailer::Open(path_, Fast(&env_));
  auto got = TruncateHalfRead(**t, w, path_, [&] { CopyFile(path_, path_ + ".1", 20); });
  int read =
      static_cast<int>(std::find(got.lines.begin(), got.lines.end(), "-") - got.lines.begin());
  ASSERT_GT(read, 0);
  // The line we were inside ends as a partial one; the rest of the file is
  // gone and counted.
  std::string cut =
      Numbered(1, 100).substr(Numbered(1, read).size(), 200 - Numbered(1, read).size());
  EXPECT_EQ(got.lines, Joined(Joined(NumberedLines(1, read), {"-", cut}), NumberedLines(101, 105)));
  EXPECT_EQ(LostBytes(got), Numbered(1, 100).size() - 200);
  EXPECT_EQ((*t)->stats().copies_read, 0u);
  EXPECT_EQ((*t)->stats().lost_truncations, 1u);
}

TEST_F(TailerTest, CopyWithAnotherFingerprintOrSeamIsNotTheCopy) {
  Writer w(path_);
  auto t = FileTailer::Open(path_, Fast(&env_));
  auto got = TruncateHalfRead(**t, w, path_, [&] {
    // Same length, other bytes; and an older generation's copy that starts
    // like ours (same head) but differs where we stopped reading.
    std::string other = Numbered(1, 100);
    other[0] = 'L';
    ASSERT_TRUE(Env::Default()->WriteFileAtomic(path_ + ".1", other).ok());
    std::string older = Numbered(1, 100);
    older.replace(150, 40, std::string(40, '#'));
    ASSERT_TRUE(Env::Default()->WriteFileAtomic(path_ + "-20261201", older).ok());
  });
  EXPECT_EQ(got.lines.back(), "line 105");
  EXPECT_EQ(std::count(got.lines.begin(), got.lines.end(), "line 100"), 0);
  EXPECT_GT(LostBytes(got), 0u);
  EXPECT_EQ((*t)->stats().copies_read, 0u);
}

TEST_F(TailerTest, GzipCopyIsInflatedOrItsLossCounted) {
  Writer w(path_);
  auto t = FileTailer::Open(path_, Fast(&env_));
  auto got = TruncateHalfRead(**t, w, path_, [&] {
    auto text = Env::Default()->ReadFile(path_, 1 << 20);
    ASSERT_TRUE(text.ok());
#ifdef VIGIL_HAVE_ZLIB
    gzFile gz = gzopen((path_ + ".1.gz").c_str(), "wb");
    ASSERT_NE(gz, nullptr);
    ASSERT_EQ(gzwrite(gz, text->data(), static_cast<unsigned>(text->size())),
              static_cast<int>(text->size()));
    ASSERT_EQ(gzclose(gz), Z_OK);
#else
    ASSERT_TRUE(Env::Default()->WriteFileAtomic(path_ + ".1.gz", "\x1f\x8b not read").ok());
#endif
  });
  size_t read = std::find(got.lines.begin(), got.lines.end(), "-") - got.lines.begin();
  got.lines.erase(got.lines.begin() + static_cast<std::ptrdiff_t>(read));
  if (CanInflateGzip()) {
    EXPECT_EQ(got.lines, Joined(NumberedLines(1, 100), NumberedLines(101, 105)));
    EXPECT_EQ((*t)->stats().copies_read, 1u);
    EXPECT_EQ(LostBytes(got), 0u);
  } else {
    EXPECT_EQ((*t)->stats().lost_truncations, 1u);
    EXPECT_GT(LostBytes(got), 0u);
  }
}

#ifdef VIGIL_HAVE_ZLIB
std::string Gzip(std::string_view text) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, text.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string ReadFd(int fd, uint64_t off, size_t n) {
  std::string b(n, '\0');
  b.resize(
      static_cast<size_t>(std::max<ssize_t>(0, ::pread(fd, b.data(), n, static_cast<off_t>(off)))));
  return b;
}

TEST(InflateGzipCopy, MembersBoundsAndDamage) {
  TempDir dir;
  std::string a = Numbered(1, 100), b = Numbered(101, 200);
  std::string gz = dir.Join("app.log.1.gz");
  // Two members read as one file, as gzip -d reads them.
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(gz, Gzip(a) + Gzip(b)).ok());
  auto c = InflateGzipCopy(gz, 10, 500, 20, 600, 1 << 20);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->complete);
  EXPECT_EQ(c->size, a.size() + b.size());
  EXPECT_EQ(c->head, (a + b).substr(0, 10));
  EXPECT_EQ(c->window, (a + b).substr(480, 20));
  EXPECT_EQ(ReadFd(c->fd, 600, 1 << 20), (a + b).substr(600));
  ::close(c->fd);
  // The bound stops the work; the copy is not complete then.
  c = InflateGzipCopy(gz, 10, 0, 0, 0, 300);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->complete);
  EXPECT_EQ(c->size, 300u);
  ::close(c->fd);
  // Cut short (still being written) or damaged: what inflates, not complete.
  std::string z = Gzip(a);
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(gz, z.substr(0, z.size() / 2)).ok());
  c = InflateGzipCopy(gz, 10, 0, 0, 0, 1 << 20);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->complete);
  EXPECT_LT(c->size, a.size());
  ::close(c->fd);
  z[z.size() / 2] ^= 0x55;
  z[z.size() / 2 + 1] ^= 0x55;
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(gz, z).ok());
  c = InflateGzipCopy(gz, 10, 0, 0, 0, 1 << 20);
  if (c.ok()) {
    EXPECT_FALSE(c->complete);
    ::close(c->fd);
  }
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(gz, "not gzip at all").ok());
  c = InflateGzipCopy(gz, 10, 0, 0, 0, 1 << 20);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->complete);
  EXPECT_EQ(c->size, 0u);
  ::close(c->fd);
}
#endif

TEST_F(TailerTest, CopyStillBeingWrittenIsAwaitedWithinRotateWait) {
  TailerOptions o = Fast(&env_);
  o.rotate_wait_ms = 1000;
  Writer w(path_);
  w.Write(Numbered(1, 40));
  auto t = FileTailer::Open(path_, o);
  Drain(**t);
  w.Write(Numbered(41, 60));
  std::string all = Numbered(1, 60);
  // The copier has written only part of it when the truncation is seen.
  ASSERT_TRUE(Env::Default()->WriteFileAtomic(path_ + ".1", all.substr(0, 100)).ok());
  ASSERT_EQ(::truncate(path_.c_str(), 0), 0);
  EXPECT_TRUE(Drain(**t).lines.empty());
  {
    Writer copier(path_ + ".1");
    copier.Write(all.substr(100, 200));  // it grows: still worth waiting for
    env_.now_ms += 200;
    EXPECT_TRUE(Drain(**t).lines.empty());
    copier.Write(all.substr(300));
  }
  env_.now_ms += 200;
  EXPECT_EQ(Drain(**t).lines, NumberedLines(41, 60));
  EXPECT_EQ((*t)->stats().copies_read, 1u);
}

// --- rotated away before the tailer first saw the file ---

TEST_F(TailerTest, EarlyRotationsSinceTheWriterStartedAreReadOldestFirst) {
  int64_t start_ms = Env::Default()->NowMillis() - 60'000;
  auto put = [&](const std::string& name, int from, int to, int64_t mtime_ms) {
    ASSERT_TRUE(Env::Default()->WriteFileAtomic(tmp_.Join(name), Numbered(from, to)).ok());
    SetMtime(tmp_.Join(name), mtime_ms);
  };
  put("app.log.3", 900, 901, start_ms - 3'600'000);  // a previous run's: older than the writer
  put("app.log-20261201", 1, 10, start_ms + 1000);
  put("app.log.1", 11, 20, start_ms + 2000);
  put("app.log.2.gz", 0, 0, start_ms + 1500);  // compressed before we looked: counted
  Writer w(path_);
  w.Write(Numbered(21, 25));
  TailerOptions o = Fast(&env_);
  o.rotated_since_ms = start_ms;
  auto t = FileTailer::Open(path_, o);
  ASSERT_TRUE(t.ok());
  auto got = Drain(**t);
  EXPECT_EQ(got.lines, NumberedLines(1, 25));
  EXPECT_EQ((*t)->stats().early_rotations_read, 2u);
  ASSERT_FALSE(got.chunks.empty());
  ASSERT_EQ(got.chunks[0].lost.size(), 1u);
  EXPECT_NE(got.chunks[0].lost[0].reason.find("app.log.2.gz"), std::string::npos);
  // Each rotated file is its own source, finished once read.
  std::set<std::string> ids;
  for (const auto& c : got.chunks) ids.insert(c.source_id);
  EXPECT_EQ(ids.size(), 3u);
}

TEST_F(TailerTest, EarlyRotationsAreNotReadWhenACheckpointExists) {
  Writer w(path_);
  w.Write(Numbered(1, 10));
  TempDir state;
  auto store = CheckpointStore::Open(&nosync_, state.Join("s"));
  ASSERT_TRUE(store.ok());
  Pipeline p{store->get()};
  TailerOptions o = Fast(&env_);
  o.rotated_since_ms = Env::Default()->NowMillis() - 60'000;
  auto t = FileTailer::Open(path_, o);
  p.Pump(**t, 1 << 16);
  t->reset();
  // Rotated while we were down; the checkpoint finds it by inode.
  ASSERT_EQ(::rename(path_.c_str(), (path_ + ".1").c_str()), 0);
  Writer w2(path_);
  w2.Write(Numbered(11, 12));
  t = FileTailer::Open(path_, o, (*store)->ForPath(path_));
  p.Pump(**t, 1 << 16);
  EXPECT_EQ(p.delivered, NumberedLines(1, 12));
  EXPECT_EQ((*t)->stats().early_rotations_read, 0u);
}

}  // namespace
}  // namespace vigil::collect::logs
