#include "core/bounded_worker.h"

#include <pthread.h>

namespace vigil {

struct BoundedWorker::Shared {
  std::mutex mu;
  std::condition_variable cv;
  std::function<void()> job;  // guarded by mu; non-empty while queued
  bool running = false;       // guarded by mu; a job is executing
  bool overran = false;       // guarded by mu; the running job missed its deadline
  bool stop = false;          // guarded by mu
  uint64_t finished = 0;      // guarded by mu; count of completed jobs
  std::chrono::steady_clock::time_point started;  // guarded by mu
};

void BoundedWorker::Loop(std::shared_ptr<Shared> s) {  // by value: keeps the state alive
  std::unique_lock<std::mutex> lock(s->mu);
  for (;;) {
    s->cv.wait(lock, [&] { return s->stop || s->job; });
    if (s->stop && !s->job) return;
    std::function<void()> job = std::move(s->job);
    s->job = nullptr;
    s->running = true;
    s->started = std::chrono::steady_clock::now();
    lock.unlock();
    job();
    lock.lock();
    s->running = false;
    s->overran = false;
    ++s->finished;
    s->cv.notify_all();
  }
}

BoundedWorker::BoundedWorker(std::string name)
    : name_(std::move(name)), shared_(std::make_shared<Shared>()) {
  thread_ = std::thread(Loop, shared_);
  std::string short_name = name_.substr(0, 15);  // Linux thread names are 15 chars at most
  pthread_setname_np(thread_.native_handle(), short_name.c_str());
}

BoundedWorker::~BoundedWorker() {
  bool stuck_now;
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->stop = true;
    shared_->job = nullptr;
    stuck_now = shared_->running;
  }
  shared_->cv.notify_all();
  if (stuck_now) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

Status BoundedWorker::Run(std::function<void()> job, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(shared_->mu);
  if (shared_->running || shared_->job) {
    return Unavailable(name_ + " is still busy with an earlier call that has not returned");
  }
  shared_->job = std::move(job);
  uint64_t target = shared_->finished + 1;
  shared_->cv.notify_all();
  bool done = shared_->cv.wait_for(lock, timeout, [&] { return shared_->finished >= target; });
  if (done) return Status::Ok();
  shared_->overran = true;
  return DeadlineExceeded(name_ + " did not return within " + std::to_string(timeout.count()) +
                          " ms");
}

bool BoundedWorker::stuck() const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  return shared_->overran;
}

std::chrono::milliseconds BoundedWorker::stuck_for() const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  if (!shared_->overran) return std::chrono::milliseconds(0);
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               shared_->started);
}

}  // namespace vigil
