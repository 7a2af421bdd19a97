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
  return ev.empty() ? "" : EventJson(ev.front());
}

// The kinds of every event a fresh detector gives `record`, in order.
std::vector<std::string> Kinds(std::string_view record) {
  LogEventDetector d;
  std::vector<std::string> out;
  for (const Event& ev : d.Detect(record, 1)) out.push_back(EventKindName(ev.kind));
  return out;
}

// The kind a fresh detector gives `record`, or "".
std::string Kind(std::string_view record) {
  LogEventDetector d;
  auto ev = d.Detect(record, 1);
  return ev.empty() ? "" : EventKindName(ev.front().kind);
}

TEST(LogEventsTest, OrdinaryLinesHaveNoEvent) {
  for (std::string_view s :
       {"", "epoch 1 loss 0.5", "{'loss': 1.23, 'epoch': 0.5}", "INFO: no errors found",
        "Evaluation completed for epoch 3", "Epoch 2 training complete", "Process killed? no",
        "NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
        "CUDA kernel errors might be asynchronously reported",
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
        "[Rank 0] step=40, skipped=0, lr=[5e-05]", "number of skipped iterations:   0 |",
        "Training time is measured in hours", "loaded 3 segfault reports"}) {
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
  // XLA's allocator names the device, not memory.
  EXPECT_EQ(Kind("Original error: RESOURCE_EXHAUSTED: Failed to allocate request for 176.00MiB "
                 "(184549376B) on device ordinal 0"),
            "cuda_oom");
  // gRPC's RESOURCE_EXHAUSTED is about messages, not memory.
  EXPECT_EQ(Kind("grpc: RESOURCE_EXHAUSTED: Received message larger than max"), "");
  EXPECT_EQ(Kind("RESOURCE_EXHAUSTED: Failed to allocate a stream slot"), "");
}

TEST(LogEventsTest, MostSpecificWinsInATraceback) {
  std::string tb =
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 3, in <module>\n"
      "    raise RuntimeError(\"CUDA out of memory\")  # source lines do not count\n"
      "ValueError: shapes differ";
  EXPECT_EQ(One(tb), R"({"line": 4, "event": "traceback", "exception": "ValueError", )"
                     R"("message": "shapes differ", "frame": "train.py:3 in \u003cmodule\u003e"})");
  EXPECT_EQ(One("Traceback (most recent call last):\n  File \"t.py\", line 1, in f\n"
                "RuntimeError: CUDA error: device-side assert triggered\n"
                "CUDA kernel errors might be asynchronously reported at some other API call"),
            R"({"line": 3, "event": "device_assert", "exception": "RuntimeError", )"
            R"("message": "CUDA error: device-side assert triggered"})");
  EXPECT_EQ(Kind("Traceback (most recent call last):\n  File \"t.py\", line 1, in f\n"
                 "torch.cuda.OutOfMemoryError: CUDA out of memory."),
            "cuda_oom");
  // The last exception of a chain is what ended the program.
  EXPECT_EQ(
      One("Traceback (most recent call last):\n  File \"a.py\", line 1, in f\n"
          "KeyError: 'x'\n\nDuring handling of the above exception, another exception "
          "occurred:\n\nTraceback (most recent call last):\n  File \"a.py\", line 3, in f\n"
          "[rank0]: KeyboardInterrupt"),
      R"({"line": 9, "event": "traceback", "exception": "KeyboardInterrupt", "frame": "a.py:3 in f"})");
}

TEST(LogEventsTest, AnyExceptionClassEndsATraceback) {
  EXPECT_EQ(
      One("Traceback (most recent call last):\n  File \"t.py\", line 1, in f\nStopIteration"),
      R"({"line": 3, "event": "traceback", "exception": "StopIteration", "frame": "t.py:1 in f"})");
  // Outside a traceback a name must say it is an exception.
  EXPECT_EQ(One("StopIteration: x"), "");
}

TEST(LogEventsTest, WorkerPrefixesAreIgnored) {
  EXPECT_EQ(One("[rank0]: Traceback (most recent call last):\n[rank0]:   File \"t.py\", line 1\n"
                "[rank0]: ValueError: x"),
            R"({"line": 3, "event": "traceback", "exception": "ValueError", "message": "x", )"
            R"("frame": "t.py:1"})");
}

// torchrun's own traceback is a traceback, and says no more than that: the
// worker's output tells the cause.
TEST(LogEventsTest, TorchrunSummaryTracebackIsOnlyATraceback) {
  EXPECT_EQ(Kinds("Traceback (most recent call last):\n  File \"/usr/bin/torchrun\", line 8\n"
                  "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: "),
            std::vector<std::string>{"traceback"});
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
  // PyTorch 2.3+ names the work that timed out.
  EXPECT_EQ(One("[rank11]:[E ProcessGroupNCCL.cpp:1537] [PG 1 Rank 11] Timeout at NCCL work: "
                "15734, last enqueued NCCL work: 15735, last completed NCCL work: 15733."),
            R"({"line": 1, "event": "nccl_timeout", "rank": 11, "seq": 15734})");
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
  EXPECT_EQ(Kind("WARNING: nan loss detected, stopping"), "nan_loss");
  EXPECT_EQ(Kind("NaN loss at step 120"), "nan_loss");
  EXPECT_EQ(Kind("Titan loss 3.0"), "");  // a word ending in "nan" is not NaN
  // Newer DeepSpeed ZeRO words its overflow skip this way.
  EXPECT_EQ(Kind("[Rank 0] Overflow detected. Skipping step. Attempted loss scale: 65536, "
                 "reducing to 32768"),
            "loss_overflow");
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
  EXPECT_EQ(Kind("INFO: Total training time: 0:12:34"), "completed");
  // A log level padded with spaces starts the message (AutoTrain's prefix).
  EXPECT_EQ(Kind("> INFO    Finished training, saving model..."), "completed");
  EXPECT_EQ(Kind("2024-05-01 10:00:00 INFO  Training completed"), "completed");
  EXPECT_EQ(Kind("NOINFO  Finished training"), "");  // not a level word
  EXPECT_EQ(Kind("we never finished training"), "");
  EXPECT_EQ(Kind("Epoch 3 training time: 0:01:02"), "");  // one epoch's time
  EXPECT_EQ(Kind("Training time per epoch 1:00"), "");
  EXPECT_EQ(Kind("pretraining complete"), "");
  EXPECT_EQ(Kind("Preprocessing finished"), "");
  // pytorch/examples' word language model closes its run with a table row.
  EXPECT_EQ(Kind("| End of training | test loss  4.87 | test ppl   130.37"), "completed");
  EXPECT_EQ(Kind("2024-05-01 10:00:00 INFO  End of training."), "completed");
  EXPECT_EQ(Kind("End of training"), "completed");
  EXPECT_EQ(Kind("End of training data, rewinding the loader"), "");
  EXPECT_EQ(Kind("| end of training epoch 3 | time: 23.49s"), "");
  EXPECT_EQ(Kind("reached the end of training"), "");  // not the message's start
}

TEST(LogEventsTest, XidEvent) {
  EXPECT_EQ(One("[1.5] NVRM: Xid (PCI:0000:3b:00): 999, pid=1, name=x, something"),
            R"({"line": 1, "event": "xid", "xid": 999, "pci": "0000:3b:00", "pid": 1, )"
            R"("process": "x", "message": "something", "meaning": "Xid not in Vigil's table", )"
            R"("action": "Look the code up in NVIDIA's \"Xid Errors\" document; reset the GPU if )"
            R"(applications fail."})");
}

// A traceback is always reported as one, after the specific kind, with the
// innermost frame of the user's code (not of an installed package).
TEST(LogEventsTest, TracebackAlongsideTheSpecificKind) {
  std::string tb =
      "Traceback (most recent call last):\n"
      "  File \"/home/u/proj/train.py\", line 42, in <module>\n"
      "    main()\n"
      "  File \"/home/u/proj/train.py\", line 30, in step\n"
      "    loss.backward()\n"
      "  File \"/usr/lib/python3/dist-packages/torch/_tensor.py\", line 522, in backward\n"
      "    torch.autograd.backward(\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.";
  EXPECT_EQ(Kinds(tb), (std::vector<std::string>{"cuda_oom", "traceback"}));
  LogEventDetector d;
  auto ev = d.Detect(tb, 1);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(EventJson(ev[1]),
            R"({"line": 8, "event": "traceback", "exception": "torch.OutOfMemoryError", )"
            R"("message": "CUDA out of memory. Tried to allocate 2.00 GiB.", )"
            R"("frame": "/home/u/proj/train.py:30 in step"})");
  // Eight ranks print the same traceback: one event.
  EXPECT_TRUE(d.Detect(tb, 9).empty());
}

// The header after a tqdm bar on the same line still opens the traceback,
// and the source line inside it is not the reason.
TEST(LogEventsTest, TracebackHeaderAfterAProgressBar) {
  std::string tb =
      "  0%|          | 56/11463 [00:10<35:12,  5.40it/s]Traceback (most recent call last):\n"
      "  File \"run.py\", line 9, in <module>\n"
      "    raise OutOfMemoryError(\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.";
  LogEventDetector d;
  auto ev = d.Detect(tb, 1);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(EventKindName(ev[0].kind), std::string("cuda_oom"));
  ASSERT_NE(ev[0].Find("requested"), nullptr);
  EXPECT_EQ(ev[0].Find("requested")->value, "20.00 MiB");
  EXPECT_EQ(ev[1].Find("frame")->value, "run.py:9 in <module>");
}

// Frames without a header (a post that starts mid-traceback, or frames the
// multiline stage kept apart), then the exception in the next record.
TEST(LogEventsTest, FramesWithoutHeaderAcrossRecords) {
  LogEventDetector d;
  EXPECT_TRUE(d.Detect("  File \"main.py\", line 5, in run", 10).empty());
  EXPECT_TRUE(d.Detect("    x = load(path)", 11).empty());
  auto ev = d.Detect("FileNotFoundError: [Errno 2] No such file or directory: 'a.bin'", 12);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(EventKindName(ev[0].kind), std::string("traceback"));
  EXPECT_EQ(ev[0].Find("frame")->value, "main.py:5 in run");
  // An exception line far from any frame is not a traceback.
  EXPECT_TRUE(d.Detect("ValueError: bad", 100).empty());
}

// A dotted wrapper that carries an exception ends headerless frames too:
// JAX's UnfilteredStackTrace; the carried exception is reported.
TEST(LogEventsTest, WrapperCarryingAnExceptionEndsFrames) {
  EXPECT_EQ(One("  File \"/jax/_src/dispatch.py\", line 465, in backend_compile\n"
                "    return backend.compile(built_c, compile_options=options)\n"
                "jax._src.traceback_util.UnfilteredStackTrace: jaxlib.xla_extension."
                "XlaRuntimeError: UNKNOWN: Failed to determine best cudnn convolution"),
            R"({"line": 3, "event": "traceback", "exception": "jaxlib.xla_extension.)"
            R"(XlaRuntimeError", "message": "UNKNOWN: Failed to determine best cudnn )"
            R"(convolution", "frame": "/jax/_src/dispatch.py:465 in backend_compile"})");
  // A name that is no exception's, carrying none, still does not.
  EXPECT_EQ(Kind("  File \"t.py\", line 1, in f\n    g()\njax.config: some setting"), "");
}

// The kernel's and the schedulers' words for the OOM killer and a segfault,
// across kernel versions.
TEST(LogEventsTest, KernelAndSchedulerForms) {
  EXPECT_EQ(One("[Thu Mar 14 01:57:54 2019] Out of memory: Kill process 89746 (python) score "
                "1031 or sacrifice child"),
            R"({"line": 1, "event": "oom_killed", "pid": 89746, "process": "python"})");
  EXPECT_EQ(One("kernel: Killed process 42452 (memcg_test_1), UID 0, total-vm:7296kB"),
            R"({"line": 1, "event": "oom_killed", "pid": 42452, "process": "memcg_test_1"})");
  EXPECT_EQ(One("[597411.196310] p2pd invoked oom-killer: gfp_mask=0x140cca, order=0"),
            R"({"line": 1, "event": "oom_killed", "invoked_by": "p2pd"})");
  EXPECT_EQ(Kind("slurmstepd: error: Detected 1 oom-kill event(s) in step 3495064.0 cgroup."),
            "oom_killed");
  EXPECT_EQ(One("[3138705.607699] test1[33417]: segfault at 656c6c6f ip 000055d26855077c"),
            R"({"line": 1, "event": "segfault", "pid": 33417, "process": "test1", )"
            R"("message": "segfault at 656c6c6f ip 000055d26855077c"})");
  EXPECT_EQ(Kind("ERROR: Unexpected segmentation fault encountered in worker."), "segfault");
}

// fp16 overflow as fairseq, DeepSpeed (a running count) and Megatron print it.
TEST(LogEventsTest, OverflowCounts) {
  EXPECT_EQ(Kind("| WARNING: overflow detected, setting loss scale to: 0.0625"), "loss_overflow");
  LogEventDetector d;
  EXPECT_TRUE(d.Detect("[Rank 0] step=10, skipped=0, lr=[5e-05]", 1).empty());
  EXPECT_EQ(d.Detect("[Rank 0] step=20, skipped=2, lr=[5e-05]", 2).size(), 1u);
  EXPECT_TRUE(d.Detect("[Rank 0] step=30, skipped=2, lr=[5e-05]", 3).empty());  // no new skip
  // InternEvo counts the batches it skipped for inf/NaN since the start.
  LogEventDetector e;
  EXPECT_TRUE(e.Detect("step=10 loss=2.1 inf_nan_skip_batches=0 acc=0.5", 1).empty());
  EXPECT_EQ(e.Detect("step=20 loss=2.1 inf_nan_skip_batches=3 acc=0.5", 2).size(), 1u);
  EXPECT_TRUE(e.Detect("step=30 loss=2.1 inf_nan_skip_batches=3 acc=0.5", 3).empty());
  EXPECT_EQ(
      Kind(" iteration 10/ 100 | loss scale: 8388608.0 | number of skipped iterations:  10 |"),
      "loss_overflow");
}

// CUDA errors and OOMs reported by NCCL, llama.cpp, TensorRT-LLM and TGI.
TEST(LogEventsTest, CudaErrorsOutsidePyTorch) {
  // PaddlePaddle 2.0, capitalised.
  EXPECT_EQ(Kind("Out of memory error on GPU 0. Cannot allocate 18.06MB memory on GPU 0"),
            "cuda_oom");
  EXPECT_EQ(Kinds("n1:1:2 [0] NCCL WARN Cuda failure 'out of memory'"),
            (std::vector<std::string>{"nccl_error", "cuda_oom"}));
  EXPECT_EQ(Kinds("n1:7400:7642 [1] include/alloc.h:125 NCCL WARN Cuda failure 700 'an illegal "
                  "memory access was encountered'"),
            (std::vector<std::string>{"nccl_error", "cuda_error"}));
  EXPECT_EQ(Kind("Error: llama runner process has terminated: cudaMalloc failed: out of memory"),
            "cuda_oom");
  EXPECT_EQ(Kind("Allocation on device 0 would exceed allowed memory. (out of memory)"),
            "cuda_oom");
  EXPECT_EQ(Kind("tensorflow.python.framework.errors_impl.UnknownError: ncclCommInitRank failed: "
                 "unhandled system error"),
            "nccl_error");
  EXPECT_EQ(Kind("[07:20:32.390498] Training time 5:47:14"), "completed");
}

// Newer PyTorch's watchdog and heartbeat reports, THC's runtime errors, HF's
// summary block.
TEST(LogEventsTest, WatchdogHangsThcErrorsAndSummaries) {
  EXPECT_EQ(One("[rank2]:[E419 10:53:25.4 ProcessGroupNCCL.cpp:1484] [PG ID 2 PG GUID 9 Rank 2] "
                "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress"),
            R"({"line": 1, "event": "nccl_timeout", "rank": 2, "stuck_s": 480})");
  EXPECT_EQ(Kind("[rank0]:[E ProcessGroupNCCL.cpp:1316] [PG 5 Rank 0] Heartbeat monitor timed out! "
                 "Process will be terminated after dumping debug info."),
            "nccl_timeout");
  EXPECT_EQ(Kind("RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered"),
            "cuda_error");
  EXPECT_EQ(Kind("***** train metrics *****"), "completed");
}

TEST(LogEventsTest, RepeatsOfOneFailureAreOneEvent) {
  LogEventDetector d;
  std::string line =
      "Loss.cu:250: nll_loss_kernel: block: [0,0,0], thread: [N,0,0] Assertion `t >= 0` failed.";
  EXPECT_FALSE(d.Detect(line, 10).empty());
  EXPECT_TRUE(d.Detect(line, 11).empty());
  EXPECT_TRUE(d.Detect("RuntimeError: CUDA error: device-side assert triggered", 20).empty());
  // Far enough apart, it is a new failure.
  EXPECT_FALSE(d.Detect(line, 500).empty());

  // torchrun's exit code line and its signal line name the same pid.
  EXPECT_FALSE(d.Detect("  exitcode  : -11 (pid: 4242)", 600).empty());
  EXPECT_TRUE(d.Detect("  traceback : Signal 11 (SIGSEGV) received by PID 4242", 602).empty());
  EXPECT_FALSE(d.Detect("  traceback : Signal 11 (SIGSEGV) received by PID 4243", 603).empty());
}

TEST(LogEventsTest, MessagesAreBoundedAtAUtf8Boundary) {
  std::string msg(298, 'a');
  msg += "\xe4\xbd\xa0\xe5\xa5\xbd";  // two 3-byte characters across byte 300
  LogEventDetector d;
  auto ev = d.Detect("Traceback (most recent call last):\nValueError: " + msg, 1);
  ASSERT_EQ(ev.size(), 1u);
  const EventDetail* m = ev[0].Find("message");
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
