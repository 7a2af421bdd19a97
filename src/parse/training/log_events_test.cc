#include "parse/training/log_events.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil::parse::training {
namespace {

// The JSON of the event a fresh detector gives one record starting on line
// 1, or "" when there is none.
std::string One(std::string_view record) {
  LogEventDetector d;
  auto ev = d.Detect(record, 1);
  return ev ? EventJson(*ev) : "";
}

// The kind a fresh detector gives `record`, or "".
std::string Kind(std::string_view record) {
  LogEventDetector d;
  auto ev = d.Detect(record, 1);
  return ev ? EventKindName(ev->kind) : "";
}

TEST(LogEventsTest, OrdinaryLinesHaveNoEvent) {
  for (std::string_view s :
       {"", "epoch 1 loss 0.5", "{'loss': 1.23, 'epoch': 0.5}", "INFO: no errors found",
        "Evaluation completed for epoch 3", "Epoch 2 training complete", "Process killed? no",
        "NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
        "CUDA kernel errors might be asynchronously reported",
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
        "python invoked oom-killer: gfp_mask=0x140cca, order=0"}) {
    EXPECT_EQ(One(s), "") << s;
  }
}

TEST(LogEventsTest, CudaOomForms) {
  EXPECT_EQ(One("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0"),
            R"({"line": 1, "event": "cuda_oom", "exception": "torch.OutOfMemoryError", )"
            R"("message": "CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0", )"
            R"("requested": "512.00 MiB"})");
  EXPECT_EQ(Kind("RuntimeError: CUDA error: out of memory"), "cuda_oom");
  EXPECT_EQ(Kind("2 root error(s) found.\n  (0) RESOURCE_EXHAUSTED: OOM when allocating tensor"),
            "cuda_oom");
  EXPECT_EQ(Kind("tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution"),
            "cuda_oom");
  EXPECT_EQ(Kind("XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 1 bytes."),
            "cuda_oom");
  // gRPC's RESOURCE_EXHAUSTED is about messages, not memory.
  EXPECT_EQ(Kind("grpc: RESOURCE_EXHAUSTED: Received message larger than max"), "");
}

TEST(LogEventsTest, MostSpecificWinsInATraceback) {
  std::string tb =
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 3, in <module>\n"
      "    raise RuntimeError(\"CUDA out of memory\")  # source lines do not count\n"
      "ValueError: shapes differ";
  EXPECT_EQ(One(tb), R"({"line": 4, "event": "traceback", "exception": "ValueError", )"
                     R"("message": "shapes differ"})");
  EXPECT_EQ(One("Traceback (most recent call last):\n  File \"t.py\", line 1, in f\n"
                "RuntimeError: CUDA error: device-side assert triggered\n"
                "CUDA kernel errors might be asynchronously reported at some other API call"),
            R"({"line": 3, "event": "device_assert", "exception": "RuntimeError", )"
            R"("message": "CUDA error: device-side assert triggered"})");
  EXPECT_EQ(Kind("Traceback (most recent call last):\n  File \"t.py\", line 1, in f\n"
                 "torch.cuda.OutOfMemoryError: CUDA out of memory."),
            "cuda_oom");
  // The last exception of a chain is what ended the program.
  EXPECT_EQ(One("Traceback (most recent call last):\n  File \"a.py\", line 1, in f\n"
                "KeyError: 'x'\n\nDuring handling of the above exception, another exception "
                "occurred:\n\nTraceback (most recent call last):\n  File \"a.py\", line 3, in f\n"
                "[rank0]: KeyboardInterrupt"),
            R"({"line": 9, "event": "traceback", "exception": "KeyboardInterrupt"})");
}

TEST(LogEventsTest, AnyExceptionClassEndsATraceback) {
  EXPECT_EQ(One("Traceback (most recent call last):\n  File \"t.py\", line 1, in f\nStopIteration"),
            R"({"line": 3, "event": "traceback", "exception": "StopIteration"})");
  // Outside a traceback a name must say it is an exception.
  EXPECT_EQ(One("StopIteration: x"), "");
}

TEST(LogEventsTest, WorkerPrefixesAreIgnored) {
  EXPECT_EQ(One("[rank0]: Traceback (most recent call last):\n[rank0]:   File \"t.py\", line 1\n"
                "[rank0]: ValueError: x"),
            R"({"line": 3, "event": "traceback", "exception": "ValueError", "message": "x"})");
}

TEST(LogEventsTest, TorchrunSummaryTracebackIsNotTheCause) {
  EXPECT_EQ(One("Traceback (most recent call last):\n  File \"/usr/bin/torchrun\", line 8\n"
                "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: "),
            "");
}

TEST(LogEventsTest, Nccl) {
  EXPECT_EQ(One("node1:123:456 [0] NCCL WARN Cuda failure 'out of memory'\n"
                "node1:123:456 [0] NCCL INFO init.cc:1234 -> 1"),
            R"({"line": 1, "event": "nccl_error", "message": "Cuda failure 'out of memory'"})");
  EXPECT_EQ(Kind("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:825, unhandled cuda error, "
                 "NCCL version 2.7.8"),
            "nccl_error");
  EXPECT_EQ(Kind("ncclInternalError: Internal check failed."), "nccl_error");
  EXPECT_EQ(One("[E ProcessGroupNCCL.cpp:828] [Rank 1] Watchdog caught collective operation "
                "timeout: WorkNCCL(SeqNum=5, OpType=BROADCAST, Timeout(ms)=1800000) ran for "
                "1800718 milliseconds before timing out."),
            R"({"line": 1, "event": "nccl_timeout", "rank": 1, "op": "BROADCAST", "seq": 5, )"
            R"("timeout_ms": 1800000, "ran_ms": 1800718})");
}

TEST(LogEventsTest, CudaErrors) {
  EXPECT_EQ(Kind("RuntimeError: CUDA error: unspecified launch failure"), "cuda_error");
  EXPECT_EQ(
      Kind("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling "
           "`cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`"),
      "cuda_error");
  EXPECT_EQ(Kind("RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR"), "cuda_error");
  EXPECT_EQ(Kind("RuntimeError: CUDA error: no kernel image is available for execution on the "
                 "device"),
            "no_kernel_image");
  EXPECT_EQ(One("RuntimeError: CUDA driver version is insufficient for CUDA runtime version"),
            R"({"line": 1, "event": "driver_too_old", "exception": "RuntimeError", )"
            R"("message": "CUDA driver version is insufficient for CUDA runtime version"})");
}

TEST(LogEventsTest, TrainingHealth) {
  EXPECT_EQ(Kind("FloatingPointError: Loss became infinite or NaN at iteration=12!"), "nan_loss");
  EXPECT_EQ(Kind("Loss is inf, stopping training"), "nan_loss");
  EXPECT_EQ(One("Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0"),
            R"({"line": 1, "event": "loss_overflow", "loss_scale": 32768.0})");
  EXPECT_EQ(One("RuntimeError: DataLoader worker (pid 1234) is killed by signal: Killed. "),
            R"({"line": 1, "event": "dataloader_killed", "exception": "RuntimeError", )"
            R"("message": "DataLoader worker (pid 1234) is killed by signal: Killed.", )"
            R"("pid": 1234, "signal": "Killed"})");
  EXPECT_EQ(Kind("RuntimeError: DataLoader worker (pid(s) 123) exited unexpectedly"),
            "dataloader_killed");
}

TEST(LogEventsTest, ProcessDeaths) {
  EXPECT_EQ(One("*** SIGSEGV (@0x0) received by PID 777 (TID 0x7f) from PID 0; stack trace: ***"),
            R"({"line": 1, "event": "segfault", "pid": 777, "message": )"
            R"("*** SIGSEGV (@0x0) received by PID 777 (TID 0x7f) from PID 0; stack trace: ***"})");
  EXPECT_EQ(Kind("Segmentation fault (core dumped)"), "segfault");
  EXPECT_EQ(One("Killed"), R"({"line": 1, "event": "oom_killed", "message": "Killed"})");
  EXPECT_EQ(
      One("  exitcode  : -9 (pid: 31337)"),
      R"j({"line": 1, "event": "oom_killed", "pid": 31337, "message": "exitcode  : -9 (pid: 31337)"})j");
  EXPECT_EQ(One("[ 1.0] Memory cgroup out of memory: Killed process 42 (python3) total-vm:1kB"),
            R"({"line": 1, "event": "oom_killed", "pid": 42, "process": "python3"})");
  EXPECT_EQ(Kind("  exitcode  : -15 (pid: 1)"), "");  // SIGTERM: a cancel, not a crash kind here
}

TEST(LogEventsTest, Completion) {
  EXPECT_EQ(
      Kind("Training completed. Do not forget to share your model on huggingface.co/models =)"),
      "completed");
  EXPECT_EQ(Kind("`Trainer.fit` stopped: `max_steps=1000` reached."), "completed");
  EXPECT_EQ(Kind("INFO:__main__:Training finished in 2h 3m"), "completed");
  EXPECT_EQ(Kind("Finished Training"), "completed");
  EXPECT_EQ(Kind("2026-11-30 10:00:00 - INFO - Training done."), "completed");
  EXPECT_EQ(Kind("300 epochs completed in 1.234 hours."), "completed");
  EXPECT_EQ(Kind("pretraining complete"), "");
  EXPECT_EQ(Kind("Preprocessing finished"), "");
}

TEST(LogEventsTest, XidEvent) {
  EXPECT_EQ(One("[1.5] NVRM: Xid (PCI:0000:3b:00): 999, pid=1, name=x, something"),
            R"({"line": 1, "event": "xid", "xid": 999, "pci": "0000:3b:00", "pid": 1, )"
            R"("process": "x", "message": "something", "meaning": "Xid not in Vigil's table", )"
            R"("action": "Look the code up in NVIDIA's \"Xid Errors\" document; reset the GPU if )"
            R"(applications fail."})");
}

TEST(LogEventsTest, RepeatsOfOneFailureAreOneEvent) {
  LogEventDetector d;
  std::string line =
      "Loss.cu:250: nll_loss_kernel: block: [0,0,0], thread: [N,0,0] Assertion `t >= 0` failed.";
  EXPECT_TRUE(d.Detect(line, 10));
  EXPECT_FALSE(d.Detect(line, 11));
  EXPECT_FALSE(d.Detect("RuntimeError: CUDA error: device-side assert triggered", 20));
  // Far enough apart, it is a new failure.
  EXPECT_TRUE(d.Detect(line, 500));

  // torchrun's exit code line and its signal line name the same pid.
  EXPECT_TRUE(d.Detect("  exitcode  : -11 (pid: 4242)", 600));
  EXPECT_FALSE(d.Detect("  traceback : Signal 11 (SIGSEGV) received by PID 4242", 602));
  EXPECT_TRUE(d.Detect("  traceback : Signal 11 (SIGSEGV) received by PID 4243", 603));
}

TEST(LogEventsTest, MessagesAreBoundedAtAUtf8Boundary) {
  std::string msg(298, 'a');
  msg += "\xe4\xbd\xa0\xe5\xa5\xbd";  // two 3-byte characters across byte 300
  LogEventDetector d;
  auto ev = d.Detect("Traceback (most recent call last):\nValueError: " + msg, 1);
  ASSERT_TRUE(ev);
  const EventDetail* m = ev->Find("message");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->value, std::string(298, 'a'));
}

TEST(LogEventsTest, JsonEscapesAndSeparators) {
  Event ev;
  ev.kind = EventKind::kTraceback;
  ev.line = 7;
  ev.AddString("message", "a \"quoted\"\tb");
  ev.AddNumber("pid", -3);
  EXPECT_EQ(EventJson(ev),
            R"({"line": 7, "event": "traceback", "message": "a \"quoted\"\tb", "pid": -3})");
}

}  // namespace
}  // namespace vigil::parse::training
