#include "core/bounded_worker.h"

#include <gtest/gtest.h>

#include <atomic>

namespace vigil {
namespace {

using std::chrono::milliseconds;

TEST(BoundedWorkerTest, RunsJobAndReturnsOk) {
  BoundedWorker w("test");
  auto value = std::make_shared<int>(0);
  ASSERT_TRUE(w.Run([value] { *value = 42; }, milliseconds(1000)).ok());
  EXPECT_EQ(*value, 42);
  EXPECT_FALSE(w.stuck());
}

TEST(BoundedWorkerTest, HangingJobTimesOutRefusesMoreAndRecovers) {
  BoundedWorker w("hang");
  auto release = std::make_shared<std::atomic<bool>>(false);
  Status st = w.Run(
      [release] {
        while (!release->load()) std::this_thread::sleep_for(milliseconds(5));
      },
      milliseconds(50));
  EXPECT_EQ(st.code(), StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(w.stuck());
  // While stuck, a new job is refused at once rather than queued behind it.
  auto ran = std::make_shared<std::atomic<bool>>(false);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(w.Run([ran] { *ran = true; }, milliseconds(1000)).code(), StatusCode::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(500));
  EXPECT_FALSE(ran->load());
  release->store(true);
  for (int i = 0; i < 200 && w.stuck(); ++i) std::this_thread::sleep_for(milliseconds(5));
  EXPECT_FALSE(w.stuck());
  EXPECT_TRUE(w.Run([ran] { *ran = true; }, milliseconds(1000)).ok());
  EXPECT_TRUE(ran->load());
}

TEST(BoundedWorkerTest, DestructorDoesNotWaitForStuckJob) {
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto t0 = std::chrono::steady_clock::now();
  {
    BoundedWorker w("detach");
    (void)w.Run(
        [release] {
          while (!release->load()) std::this_thread::sleep_for(milliseconds(5));
        },
        milliseconds(20));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(1000));
  release->store(true);
  std::this_thread::sleep_for(milliseconds(50));  // let the detached thread finish cleanly
}

}  // namespace
}  // namespace vigil
