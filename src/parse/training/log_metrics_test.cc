#include "parse/training/log_metrics.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

// Counts allocations, to check that a line with no metric allocates nothing.
// GCC cannot see that the replaced operator new below is malloc underneath.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
static std::atomic<long> g_allocations{0};
void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace vigil::parse::training {
namespace {

// Every sample of one line, rendered as `vigil inspect-log` prints them
// (without the line number), one per element.
std::vector<std::string> Render(LogMetricExtractor* x, std::string_view line) {
  std::vector<MetricSample> samples;
  x->Extract(line, &samples);
  std::vector<std::string> out;
  for (const MetricSample& s : samples) {
    std::string json = MetricSampleJson(1, s);
    out.push_back(json.substr(json.find("\"metric\"")));
  }
  return out;
}

std::vector<std::string> Render(std::string_view line) {
  LogMetricExtractor x;
  return Render(&x, line);
}

using V = std::vector<std::string>;

// Every sample of consecutive lines read by one extractor, rendered as above.
V Lines(std::vector<std::string_view> text) {
  LogMetricExtractor x;
  V out;
  for (std::string_view l : text) {
    for (const std::string& r : Render(&x, l)) out.push_back(r);
  }
  return out;
}

TEST(MetricSampleJson, FormatsLikeInspectLog) {
  MetricSample s{"loss", 1.234, 100};
  EXPECT_EQ(MetricSampleJson(7, s),
            R"({"line": 7, "metric": "loss", "value": 1.234, "step": 100})");
  s = {"learning_rate", 5e-05, std::nullopt};
  EXPECT_EQ(MetricSampleJson(1, s), R"({"line": 1, "metric": "learning_rate", "value": 5e-05})");
}

TEST(MetricSampleJson, ShortestRoundTripValues) {
  auto value = [](double v) {
    std::string j = MetricSampleJson(1, {"x", v, std::nullopt});
    size_t at = j.find("\"value\": ") + 9;
    return j.substr(at, j.size() - at - 1);
  };
  EXPECT_EQ(value(100), "100");
  EXPECT_EQ(value(0.1), "0.1");
  EXPECT_EQ(value(0.0001), "0.0001");
  EXPECT_EQ(value(1e-05), "1e-05");
  EXPECT_EQ(value(4.9e-05), "4.9e-05");
  EXPECT_EQ(value(1.5e-4), "0.00015");
  EXPECT_EQ(value(7.123456), "7.123456");
  EXPECT_EQ(value(65536), "65536");
  EXPECT_EQ(value(1e16), "1e+16");
  EXPECT_EQ(value(123456789012345), "123456789012345");
  EXPECT_EQ(value(-100), "-100");
  EXPECT_EQ(value(0), "0");
  EXPECT_EQ(value(std::numeric_limits<double>::quiet_NaN()), "\"nan\"");
  EXPECT_EQ(value(std::numeric_limits<double>::infinity()), "\"inf\"");
  EXPECT_EQ(value(-std::numeric_limits<double>::infinity()), "\"-inf\"");
}

TEST(MetricSampleJson, EscapesNames) {
  EXPECT_EQ(MetricSampleJson(2, {"a\"b", 1, std::nullopt}),
            R"({"line": 2, "metric": "a\"b", "value": 1})");
}

TEST(CanonicalMetricName, Aliases) {
  EXPECT_EQ(CanonicalMetricName("lr"), "learning_rate");
  EXPECT_EQ(CanonicalMetricName("learning rate"), "learning_rate");
  EXPECT_EQ(CanonicalMetricName("LR"), "learning_rate");
  EXPECT_EQ(CanonicalMetricName("grad norm"), "grad_norm");
  EXPECT_EQ(CanonicalMetricName("gradient_norm"), "grad_norm");
  EXPECT_EQ(CanonicalMetricName("samples/s"), "samples_per_second");
  EXPECT_EQ(CanonicalMetricName("samples_per_sec"), "samples_per_second");
  EXPECT_EQ(CanonicalMetricName("tok/s"), "tokens_per_second");
  EXPECT_EQ(CanonicalMetricName("tokens_per_sec"), "tokens_per_second");
  EXPECT_EQ(CanonicalMetricName("it/s"), "iterations_per_second");
  EXPECT_EQ(CanonicalMetricName("global_step"), "step");
  EXPECT_EQ(CanonicalMetricName("iteration"), "step");
  EXPECT_EQ(CanonicalMetricName("lm loss"), "loss");
  EXPECT_EQ(CanonicalMetricName("train_samples_per_second"), "train_samples_per_second");
  EXPECT_EQ(CanonicalMetricName("eval_loss"), "eval_loss");
  EXPECT_EQ(CanonicalMetricName("val_Acc"), "val_Acc");
}

TEST(Extract, HuggingFaceDicts) {
  EXPECT_EQ(Render("{'loss': 0.5123, 'grad_norm': 1.2, 'learning_rate': 4.9e-05, 'epoch': 0.04}"),
            (V{R"("metric": "loss", "value": 0.5123})", R"("metric": "grad_norm", "value": 1.2})",
               R"("metric": "learning_rate", "value": 4.9e-05})",
               R"("metric": "epoch", "value": 0.04})"}));
  EXPECT_EQ(Render("{'train_runtime': 123.4, 'train_samples_per_second': 51.9, 'epoch': 3.0}"),
            (V{R"("metric": "train_runtime", "value": 123.4})",
               R"("metric": "train_samples_per_second", "value": 51.9})",
               R"("metric": "epoch", "value": 3})"}));
  EXPECT_EQ(Render(R"({"eval_loss": 0.25, "eval_accuracy": 0.9, "step": 500})"),
            (V{R"("metric": "eval_loss", "value": 0.25, "step": 500})",
               R"("metric": "eval_accuracy", "value": 0.9, "step": 500})",
               R"("metric": "step", "value": 500, "step": 500})"}));
  EXPECT_EQ(Render("{'loss': 2.1, 'grad_norm': tensor(3.5, device='cuda:0'), 'epoch': 0.1}"),
            (V{R"("metric": "loss", "value": 2.1})", R"("metric": "grad_norm", "value": 3.5})",
               R"("metric": "epoch", "value": 0.1})"}));
}

TEST(Extract, NonFiniteValues) {
  EXPECT_EQ(Render("{'loss': nan, 'grad_norm': inf, 'learning_rate': 1e-05}"),
            (V{R"("metric": "loss", "value": "nan"})", R"("metric": "grad_norm", "value": "inf"})",
               R"("metric": "learning_rate", "value": 1e-05})"}));
  EXPECT_EQ(Render("step=3 loss=NaN grad_norm=-Infinity"),
            (V{R"("metric": "step", "value": 3, "step": 3})",
               R"("metric": "loss", "value": "nan", "step": 3})",
               R"("metric": "grad_norm", "value": "-inf", "step": 3})"}));
  EXPECT_EQ(Render("loss: nan"), (V{R"("metric": "loss", "value": "nan"})"}));
  EXPECT_EQ(
      Render("loss=-nan lr=Infinity norm=+inf"),
      (V{R"("metric": "loss", "value": "nan"})", R"("metric": "learning_rate", "value": "inf"})",
         R"("metric": "norm", "value": "inf"})"}));
  EXPECT_EQ(Render("info=1 nano=2 infinite: 3"), V{});
}

TEST(Extract, TqdmBars) {
  EXPECT_EQ(Render(" 42%|████▏     | 420/1000 [00:21<00:29, 19.61it/s]"),
            (V{R"("metric": "step", "value": 420, "step": 420})",
               R"("metric": "iterations_per_second", "value": 19.61, "step": 420})"}));
  EXPECT_EQ(Render(" 10%|█         | 10/100 [00:25<03:45,  2.50s/it]"),
            (V{R"("metric": "step", "value": 10, "step": 10})",
               R"("metric": "iterations_per_second", "value": 0.4, "step": 10})"}));
  EXPECT_EQ(Render("420it [00:21, 19.61it/s]"),
            (V{R"("metric": "step", "value": 420, "step": 420})",
               R"("metric": "iterations_per_second", "value": 19.61, "step": 420})"}));
  // Lightning: description, postfix; v_num is a version, not a metric.
  EXPECT_EQ(Render("Epoch 0:  42%|████▏     | 420/1000 [00:21<00:29, 19.61it/s, v_num=0, "
                   "train_loss=0.123]"),
            (V{R"("metric": "epoch", "value": 0, "step": 420})",
               R"("metric": "step", "value": 420, "step": 420})",
               R"("metric": "iterations_per_second", "value": 19.61, "step": 420})",
               R"("metric": "loss", "value": 0.123, "step": 420})"}));
  // Not a training loop's bar: no step, no rate.
  EXPECT_EQ(Render("Loading checkpoint shards: 100%|██████████| 3/3 [00:02<00:00,  1.20it/s]"),
            V{});
  EXPECT_EQ(Render("Map: 100%|██████████| 1000/1000 [00:00<00:00, 12345.67 examples/s]"), V{});
  EXPECT_EQ(Render("model.safetensors: 100%|██████████| 548M/548M [00:05<00:00, 98.1MB/s]"), V{});
}

TEST(Extract, CarriageReturnUpdatesAreNotRepeated) {
  LogMetricExtractor x;
  EXPECT_EQ(Render(&x,
                   "\r 50%|█████     | 1/2 [00:01<00:01,  1.00it/s]\r 50%|█████     | "
                   "1/2 [00:01<00:01,  1.00it/s, loss=0.5]\r100%|██████████| 2/2 "
                   "[00:02<00:00,  1.00it/s, loss=0.5]"),
            (V{R"("metric": "step", "value": 1, "step": 1})",
               R"("metric": "iterations_per_second", "value": 1, "step": 1})",
               R"("metric": "loss", "value": 0.5, "step": 1})",
               R"("metric": "step", "value": 2, "step": 2})",
               R"("metric": "iterations_per_second", "value": 1, "step": 2})",
               R"("metric": "loss", "value": 0.5, "step": 2})"}));
}

TEST(Extract, AnsiEscapesAreStripped) {
  EXPECT_EQ(
      Render("\x1b[32mloss\x1b[0m=\x1b[1m0.25\x1b[0m lr=1e-3"),
      (V{R"("metric": "loss", "value": 0.25})", R"("metric": "learning_rate", "value": 0.001})"}));
  EXPECT_EQ(Render("\x1b]0;title 3\x07step 7: loss 1.5"),
            (V{R"("metric": "step", "value": 7, "step": 7})",
               R"("metric": "loss", "value": 1.5, "step": 7})"}));
}

TEST(Extract, DeepSpeed) {
  EXPECT_EQ(Render("[2024-05-01 10:00:00,123] [INFO] [logging.py:96:log_dist] [Rank 0] step=100, "
                   "skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]"),
            (V{R"("metric": "step", "value": 100, "step": 100})",
               R"("metric": "skipped", "value": 0, "step": 100})",
               R"("metric": "learning_rate", "value": 0.0001, "step": 100})"}));
  EXPECT_EQ(Render("[Rank 0] epoch=0/micro_step=100/global_step=100, RunningAvgSamplesPerSec=31.6, "
                   "CurrSamplesPerSec=32.1, MemAllocated=4.1GB, MaxMemAllocated=9.3GB"),
            (V{R"("metric": "epoch", "value": 0, "step": 100})",
               R"("metric": "micro_step", "value": 100, "step": 100})",
               R"("metric": "step", "value": 100, "step": 100})",
               R"("metric": "RunningAvgSamplesPerSec", "value": 31.6, "step": 100})",
               R"("metric": "samples_per_second", "value": 32.1, "step": 100})",
               R"("metric": "MemAllocated", "value": 4.1, "step": 100})",
               R"("metric": "MaxMemAllocated", "value": 9.3, "step": 100})"}));
}

TEST(Extract, Megatron) {
  EXPECT_EQ(
      Render(" iteration      100/  500000 | consumed samples:        51200 | elapsed time per "
             "iteration (ms): 1234.5 | learning rate: 1.500E-04 | global batch size:   512 | lm "
             "loss: 7.123456E+00 | loss scale: 65536.0 | grad norm: 1.234 | number of skipped "
             "iterations:   0 | number of nan iterations:   0 |"),
      (V{R"("metric": "step", "value": 100, "step": 100})",
         R"("metric": "consumed_samples", "value": 51200, "step": 100})",
         R"("metric": "elapsed_time_per_iteration_ms", "value": 1234.5, "step": 100})",
         R"("metric": "learning_rate", "value": 0.00015, "step": 100})",
         R"("metric": "global_batch_size", "value": 512, "step": 100})",
         R"("metric": "loss", "value": 7.123456, "step": 100})",
         R"("metric": "loss_scale", "value": 65536, "step": 100})",
         R"("metric": "grad_norm", "value": 1.234, "step": 100})",
         R"("metric": "number_of_skipped_iterations", "value": 0, "step": 100})",
         R"("metric": "number_of_nan_iterations", "value": 0, "step": 100})"}));
}

// Names of the training loss, LR and grad norm with qualifiers ("train_",
// "current", "/train") or second names ("total_loss"); the plainest name on
// a line wins when several name one metric.
TEST(Extract, QualifiedAndSecondNames) {
  auto names = [](std::string_view line) {
    std::vector<std::string> out;
    LogMetricExtractor x;
    std::vector<MetricSample> samples;
    x.Extract(line, &samples);
    for (const MetricSample& s : samples) out.push_back(s.name + "=" + std::to_string(s.value));
    return out;
  };
  EXPECT_EQ(names(R"({"train_lr": 0.001, "train_loss": 2.5, "test_loss": 3.0})"),
            (V{"learning_rate=0.001000", "loss=2.500000", "test_loss=3.000000"}));
  EXPECT_EQ(names("iter: 19  total_loss: 1.36  loss_cls: 0.65  lr: 3.8e-06"),
            (V{"step=19.000000", "loss=1.360000", "loss_cls=0.650000", "learning_rate=0.000004"}));
  EXPECT_EQ(names("loss=0.5, reduced_train_loss=0.7"),
            (V{"loss=0.500000", "reduced_train_loss=0.700000"}));
  EXPECT_EQ(names("reduced_train_loss=0.7, lr=0.1"),
            (V{"loss=0.700000", "learning_rate=0.100000"}));
  EXPECT_EQ(names("Epoch 3 | loss train: 2.846, val: 2.861"),
            (V{"epoch=3.000000", "loss=2.846000", "val=2.861000"}));
  EXPECT_EQ(names("Loss is 0.25. Current learning rate is 0.5."),
            (V{"loss=0.250000", "learning_rate=0.500000"}));
  // Digits inside a word of a multi-word key keep it apart from "loss".
  EXPECT_EQ(names("lm loss: 2.0 | mtp_1 loss: 3.0"), (V{"loss=2.000000", "mtp_1_loss=3.000000"}));
  // "train_step" is not the run's step, "val_lr" not a qualified LR.
  EXPECT_EQ(names("train_step: 5, val_lr: 0.1, loss: 1.0"),
            (V{"train_step=5.000000", "val_lr=0.100000", "loss=1.000000"}));
  // The unit a loop logs its loss over qualifies it: batch, iteration, epoch,
  // a running or mean value; a phase still does not.
  EXPECT_EQ(names("Epoch 1 - Batch loss: 12.1336"), (V{"epoch=1.000000", "loss=12.133600"}));
  EXPECT_EQ(names("Iteration loss: 2.31, epoch_loss: 2.5"),
            (V{"loss=2.310000", "epoch_loss=2.500000"}));
  EXPECT_EQ(names("running loss: 0.3452"), (V{"loss=0.345200"}));
  EXPECT_EQ(names("Mean loss: 0.123"), (V{"loss=0.123000"}));
  EXPECT_EQ(names("batch val_loss: 0.5"), (V{"batch_val_loss=0.500000"}));
}

// "key:value" without a space is a pair only for a key that names a metric.
TEST(Extract, TightColonPairs) {
  EXPECT_EQ(Render("Epoch:[0/19](100/24681) loss:5.251 lr:0.00020000 epoch_Time:98.0min:"),
            (V{R"("metric": "epoch", "value": 0})", R"("metric": "loss", "value": 5.251})",
               R"("metric": "learning_rate", "value": 0.0002})"}));
  EXPECT_EQ(Render("connecting to host:8080 on cuda:0 at 10:00"), V{});
  EXPECT_EQ(Render("Step 4 | loss:1.12 lr:2e-05"),
            (V{R"("metric": "step", "value": 4, "step": 4})",
               R"("metric": "loss", "value": 1.12, "step": 4})",
               R"("metric": "learning_rate", "value": 2e-05, "step": 4})"}));
}

// A value with its running average in parentheses, in tab or comma cells;
// a message that is only a name and a number.
TEST(Extract, AveragedCellsAndBareMessages) {
  EXPECT_EQ(Render("Epoch: [3][ 20/500]\tTime  0.7 ( 0.8)\tLoss 2.5e+00 (1.5e+00)"),
            (V{R"("metric": "epoch", "value": 3})", R"("metric": "Time", "value": 0.7})",
               R"("metric": "loss", "value": 2.5})"}));
  EXPECT_EQ(Render("step 7: train loss 4.5 (took 2141 ms)"),
            (V{R"("metric": "step", "value": 7, "step": 7})",
               R"("metric": "loss", "value": 4.5, "step": 7})"}));
  EXPECT_EQ(Render("2024-01-02 10:00:00.123456: train_loss 0.7088"),
            (V{R"("metric": "loss", "value": 0.7088})"}));
  EXPECT_EQ(Render("LR 0.000100"), (V{R"("metric": "learning_rate", "value": 0.0001})"}));
  EXPECT_EQ(Render("scheduler - Changing lr from 1 to 0.8"),
            (V{R"("metric": "learning_rate", "value": 0.8})"}));
  EXPECT_EQ(Render("using pin_memory on device 0"), V{});
  EXPECT_EQ(Render("Saved 12 checkpoints to disk 42"), V{});
  // A pair is complete before a cell with no separator.
  EXPECT_EQ(Render("Epoch 31/300 200/1000 loss: 0.2830 time 1.49s"),
            (V{R"("metric": "epoch", "value": 31})", R"("metric": "loss", "value": 0.283})"}));
}

// Names and numbers with only spaces between, read when one is a training
// metric's; table rows of a name and a number; values in tuples, quotes and
// angle brackets.
TEST(Extract, WordRunsTablesAndWrappedValues) {
  EXPECT_EQ(Render("Epoch 2 Batch 50 Loss 8.7892 Accuracy 0.0123"),
            (V{R"("metric": "epoch", "value": 2})", R"("metric": "loss", "value": 8.7892})",
               R"("metric": "Accuracy", "value": 0.0123})"}));
  EXPECT_EQ(Render("Iter 100/1000, loss 2.3, lr 0.01"),
            (V{R"("metric": "step", "value": 100, "step": 100})",
               R"("metric": "loss", "value": 2.3, "step": 100})",
               R"("metric": "learning_rate", "value": 0.01, "step": 100})"}));
  // A name of two words before its number: only the pair names the metric.
  EXPECT_EQ(Render("Step 100/1000, Loss 2.345, LR 1.0e-04, Grad Norm 0.56"),
            (V{R"("metric": "step", "value": 100, "step": 100})",
               R"("metric": "loss", "value": 2.345, "step": 100})",
               R"("metric": "learning_rate", "value": 0.0001, "step": 100})",
               R"("metric": "grad_norm", "value": 0.56, "step": 100})"}));
  EXPECT_EQ(Render("epoch 2 loss 0.5 Learning Rate 3e-4"),
            (V{R"("metric": "epoch", "value": 2})", R"("metric": "loss", "value": 0.5})",
               R"("metric": "learning_rate", "value": 0.0003})"}));
  // "Norm" alone, or after a word that makes no metric, stays as written.
  EXPECT_EQ(Render("loss 0.5 weight norm 3.0"),
            (V{R"("metric": "loss", "value": 0.5})", R"("metric": "norm", "value": 3})"}));
  EXPECT_EQ(Render("Saved 12 files to disk 3 times"), V{});
  EXPECT_EQ(Render("|    learning_rate        | 0.0003     |"),
            (V{R"("metric": "learning_rate", "value": 0.0003})"}));
  EXPECT_EQ(Render("|    total_timesteps      | 9000       |"), V{});  // no metric name
  EXPECT_EQ(Render("\xe2\x94\x82 loss                 0.6204 \xe2\x94\x82"),
            (V{R"("metric": "loss", "value": 0.6204})"}));
  EXPECT_EQ(Render("I | [Loss] 2.5 | [exp] ./exp/a | [step]    89 |"),
            (V{R"("metric": "loss", "value": 2.5, "step": 89})",
               R"("metric": "step", "value": 89, "step": 89})"}));
  EXPECT_EQ(Render("INFO: [net][epoch:  8, iter:     500, lr:(2.000e-04,)] l_pix: 0.1"),
            (V{R"("metric": "epoch", "value": 8, "step": 500})",
               R"("metric": "step", "value": 500, "step": 500})",
               R"("metric": "learning_rate", "value": 0.0002, "step": 500})",
               R"("metric": "l_pix", "value": 0.1, "step": 500})"}));
  EXPECT_EQ(Render("INFO: <epoch: 86, iter: 107, lr:2.500e-05> psnr: 13.8"),
            (V{R"("metric": "epoch", "value": 86, "step": 107})",
               R"("metric": "step", "value": 107, "step": 107})",
               R"("metric": "learning_rate", "value": 2.5e-05, "step": 107})",
               R"("metric": "psnr", "value": 13.8, "step": 107})"}));
  EXPECT_EQ(Render(R"({"epoch": 25, "loss": "3.097", "lr_0": 0.1, "gnorm": "0.194"})"),
            (V{R"("metric": "epoch", "value": 25})", R"("metric": "loss", "value": 3.097})",
               R"("metric": "learning_rate", "value": 0.1})",
               R"("metric": "grad_norm", "value": 0.194})"}));
  // An aside in parentheses is not a value.
  EXPECT_EQ(Render("lr: (0.5) warmup"), V{});
}

// Pretty-printed JSON: members of a record (an object in an array, or an
// object that has shown a step) are read one per line; a configuration
// object's are not.
TEST(Extract, PrettyPrintedJsonRecords) {
  EXPECT_EQ(
      Lines({"{", "  \"log_history\": [", "    {", "      \"epoch\": 0.05,",
             "      \"learning_rate\": 0.0002,", "      \"loss\": 1.1005,", "      \"step\": 10",
             "    }", "  ]", "}"}),
      (V{R"("metric": "epoch", "value": 0.05})", R"("metric": "learning_rate", "value": 0.0002})",
         R"("metric": "loss", "value": 1.1005})",
         R"("metric": "step", "value": 10, "step": 10})"}));
  EXPECT_EQ(
      Lines({"{\"iter\": 120000, ", "  \"loss\": 0.56, ", "  \"lr\": 0.01}"}),
      (V{R"("metric": "step", "value": 120000, "step": 120000})",
         R"("metric": "loss", "value": 0.56})", R"("metric": "learning_rate", "value": 0.01})"}));
  // A configuration dump: no step before its rate, or nested in another object.
  EXPECT_EQ(Lines({"{", "  \"learning_rate\": 5e-05,", "  \"optimizer\": {", "    \"lr\": 0.001,",
                   "  }", "}"}),
            V{});
  // Text that is not JSON closes what was open.
  EXPECT_EQ(Lines({"config = {", "INFO starting", "  \"loss\": 1.0,"}), V{});
}

// A step line ending in ':' announces the dict printed on the next lines, one
// member a line (TF Model Garden's controller, pprint of its output dict).
TEST(Extract, DictAnnouncedByAStepLine) {
  EXPECT_EQ(Lines({"train | step:    140 | steps/sec:    0.1 | output:",
                   "    {'learning_rate': 0.00014860001,", "     'loss_pq': 0.0059654233,",
                   "     'training_loss': 0.4755017}"}),
            (V{R"("metric": "step", "value": 140, "step": 140})",
               R"("metric": "steps/sec", "value": 0.1, "step": 140})",
               R"("metric": "learning_rate", "value": 0.00014860001})",
               R"("metric": "loss_pq", "value": 0.0059654233})",
               R"("metric": "loss", "value": 0.4755017})"}));
  // Double quotes too; the dict ends at its '}', and what follows is read as
  // before (a lone pair ending in ',' stays a dump line).
  EXPECT_EQ(
      Lines({"step 7:", "{\"lr\": 0.5,", " \"loss\": 1.5}", "  'lr': 0.25,"}),
      (V{R"("metric": "step", "value": 7, "step": 7})",
         R"("metric": "learning_rate", "value": 0.5})", R"("metric": "loss", "value": 1.5})"}));
  // No announcement: a line without a step, or a dict that does not open on
  // the next line, or a member holding a container.
  EXPECT_EQ(Lines({"model config:", "{'learning_rate': 5e-05,"}), V{});
  EXPECT_EQ(Lines({"train | step: 3 | output:", "", "{'learning_rate': 5e-05,"}),
            (V{R"("metric": "step", "value": 3, "step": 3})"}));
  EXPECT_EQ(Lines({"train | step: 3 | output:", "{'optimizer': {'lr': 5e-05,"}),
            (V{R"("metric": "step", "value": 3, "step": 3})"}));
}

// Darknet's iteration line names its values after them; Caffe's per-output
// losses are not the iteration's; a key padded to a column before its ':'.
TEST(Extract, DarknetCaffeAndPaddedKeys) {
  EXPECT_EQ(Render(" 2267: 0.52, 0.61 avg, 0.001000 rate, 3.43 seconds, 145088 images"),
            (V{R"("metric": "step", "value": 2267, "step": 2267})",
               R"("metric": "loss", "value": 0.52, "step": 2267})",
               R"("metric": "avg_loss", "value": 0.61, "step": 2267})",
               R"("metric": "learning_rate", "value": 0.001, "step": 2267})"}));
  EXPECT_EQ(Render("I0627 solver.cpp:244]     Train net output #0: loss = 51.5 (* 1 = 51.5 loss)"),
            (V{R"("metric": "output_loss", "value": 51.5})"}));
  EXPECT_EQ(Render("I0627 solver.cpp:228] Iteration 240, loss = 51.5"),
            (V{R"("metric": "step", "value": 240, "step": 240})",
               R"("metric": "loss", "value": 51.5, "step": 240})"}));
  EXPECT_EQ(Render("train/loss     : 7.6923"), (V{R"("metric": "loss", "value": 7.6923})"}));
  EXPECT_EQ(Render("  exitcode  : -9 (pid: 1234)"), V{});  // padded, but no metric's name
}

// Python (name, value) tuples; a table's second group of the same columns;
// an ellipsis after a value.
TEST(Extract, TuplesRepeatedColumnsAndEllipses) {
  EXPECT_EQ(
      Render("- train, rank: 0, [('loss_att', 0.659), ('loss', 0.332)]"),
      (V{R"("metric": "loss_att", "value": 0.659})", R"("metric": "loss", "value": 0.332})"}));
  EXPECT_EQ(Render("epoch: 5 |loss 0.9156 | hm_loss 0.68 | loss 0.8787 | hm_loss 0.65 |"),
            (V{R"("metric": "epoch", "value": 5})", R"("metric": "loss", "value": 0.9156})",
               R"("metric": "hm_loss", "value": 0.68})"}));
  // Keras's progress line with the next print glued on, no newline between.
  EXPECT_EQ(Render("  3/234 [....] - ETA: 33:37:24 - loss: 44.4110Batch 3: Invalid loss"),
            (V{R"("metric": "step", "value": 3, "step": 3})",
               R"("metric": "loss", "value": 44.411, "step": 3})"}));
  EXPECT_EQ(
      Render("==> Start Training Epoch 9, lr=0.009845 ..."),
      (V{R"("metric": "epoch", "value": 9})", R"("metric": "learning_rate", "value": 0.009845})"}));
}

// Values before their names, names of two words before "to", an index in a
// component's name, a name after a tqdm bar and separators earlier in a cell.
TEST(Extract, ValueFirstIndexedNamesAndGluedBars) {
  EXPECT_EQ(Render("    1 93.44 s run, 11.8750 loss, 0.000000000001 LR, 642.43 GB used"),
            (V{R"("metric": "loss", "value": 11.875})",
               R"("metric": "learning_rate", "value": 1e-12})"}));
  EXPECT_EQ(Render("Updating learning rate to 5e-05"),
            (V{R"("metric": "learning_rate", "value": 5e-05})"}));
  EXPECT_EQ(Render("  Style 1 loss: 3748559.179688"),
            (V{R"("metric": "Style_1_loss", "value": 3748559.179688})"}));
  EXPECT_EQ(Render(" 25%|##  | 75/301 [01:06<04:36,  1.23s/it]node 03/20 [t.py 155] ===> "
                   "Epoch[4](1280/301): Loss 0.7165      LR: 9.904e-02   Score nan"),
            (V{R"("metric": "step", "value": 75, "step": 75})",
               R"("metric": "iterations_per_second", "value": 0.8130081300813008, "step": 75})",
               R"("metric": "epoch", "value": 4, "step": 75})",
               R"("metric": "loss", "value": 0.7165, "step": 75})",
               R"("metric": "learning_rate", "value": 0.09904, "step": 75})"}));
  EXPECT_EQ(
      Render("INFO Train: [30/300][210/2859]\teta 0:25:26 lr 0.000872\t wd 0.0500"),
      (V{R"("metric": "learning_rate", "value": 0.000872})", R"("metric": "wd", "value": 0.05})"}));
}

// A loss after a validation or test phase word is not the training loss.
TEST(Extract, PhaseWordsRenameTheLoss) {
  EXPECT_EQ(Render("| epoch 005 | valid on 'valid' subset  1000 / 1311 loss=2.72"),
            (V{R"("metric": "epoch", "value": 5})", R"("metric": "valid_loss", "value": 2.72})"}));
  EXPECT_EQ(Render("Eval: step=10 loss=0.5"),
            (V{R"("metric": "step", "value": 10, "step": 10})",
               R"("metric": "eval_loss", "value": 0.5, "step": 10})"}));
  // Not a phase: part of a path or a key, or taken back by "train".
  EXPECT_EQ(Render("data=/data/test/x.bin loss=0.5"), (V{R"("metric": "loss", "value": 0.5})"}));
  EXPECT_EQ(Render("after val, train: loss=0.5"), (V{R"("metric": "loss", "value": 0.5})"}));
}

TEST(Extract, NanoGpt) {
  EXPECT_EQ(Render("iter 100: loss 2.3456, time 123.45ms, mfu 12.34%"),
            (V{R"("metric": "step", "value": 100, "step": 100})",
               R"("metric": "loss", "value": 2.3456, "step": 100})",
               R"("metric": "time", "value": 123.45, "step": 100})",
               R"("metric": "mfu", "value": 12.34, "step": 100})"}));
  EXPECT_EQ(Render("step 500: train loss 1.8000, val loss 1.9000"),
            (V{R"("metric": "step", "value": 500, "step": 500})",
               R"("metric": "loss", "value": 1.8, "step": 500})",
               R"("metric": "val_loss", "value": 1.9, "step": 500})"}));
  EXPECT_EQ(Render("step    1/74 | train loss 11.0121 | norm 15.4278 | lr 1.00e-04 | 1063.35 ms | "
                   "27.9% bf16 MFU | 15424 tok/s"),
            (V{R"("metric": "step", "value": 1, "step": 1})",
               R"("metric": "loss", "value": 11.0121, "step": 1})",
               R"("metric": "norm", "value": 15.4278, "step": 1})",
               R"("metric": "learning_rate", "value": 0.0001, "step": 1})",
               R"("metric": "tokens_per_second", "value": 15424, "step": 1})"}));
}

TEST(Extract, Keras) {
  EXPECT_EQ(Render("Epoch 3/10"), (V{R"("metric": "epoch", "value": 3})"}));
  EXPECT_EQ(Render("100/100 [==============================] - 2s 20ms/step - loss: 0.3012 - "
                   "accuracy: 0.9123 - val_loss: 0.25 - val_accuracy: 0.93"),
            (V{R"("metric": "step", "value": 100, "step": 100})",
               R"("metric": "loss", "value": 0.3012, "step": 100})",
               R"("metric": "accuracy", "value": 0.9123, "step": 100})",
               R"("metric": "val_loss", "value": 0.25, "step": 100})",
               R"("metric": "val_accuracy", "value": 0.93, "step": 100})"}));
  EXPECT_EQ(Render(" 32/100 [=======>......................] - ETA: 1s - loss: 0.4325"),
            (V{R"("metric": "step", "value": 32, "step": 32})",
               R"("metric": "loss", "value": 0.4325, "step": 32})"}));
}

TEST(Extract, UltralyticsYolo) {
  LogMetricExtractor x;
  EXPECT_EQ(
      Render(&x, "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size"),
      V{});
  EXPECT_EQ(Render(&x,
                   "      1/100      2.1G      1.234      2.345      1.456         32        640: "
                   "100%|██████████| 8/8 [00:02<00:00,  3.2it/s]"),
            (V{R"("metric": "epoch", "value": 1, "step": 8})",
               R"("metric": "GPU_mem", "value": 2.1, "step": 8})",
               R"("metric": "box_loss", "value": 1.234, "step": 8})",
               R"("metric": "cls_loss", "value": 2.345, "step": 8})",
               R"("metric": "dfl_loss", "value": 1.456, "step": 8})",
               R"("metric": "Instances", "value": 32, "step": 8})",
               R"("metric": "Size", "value": 640, "step": 8})",
               R"("metric": "step", "value": 8, "step": 8})",
               R"("metric": "iterations_per_second", "value": 3.2, "step": 8})"}));
  EXPECT_EQ(Render(&x,
                   "                 Class     Images  Instances      Box(P          R      mAP50  "
                   "mAP50-95): 100%|██████████| 4/4 [00:01<00:00,  3.10it/s]"),
            V{});
  EXPECT_EQ(
      Render(&x,
             "                   all        128        929      0.668      0.539      0.612 "
             "     0.453"),
      (V{R"("metric": "Images", "value": 128})", R"("metric": "Instances", "value": 929})",
         R"("metric": "P", "value": 0.668})", R"("metric": "R", "value": 0.539})",
         R"("metric": "mAP50", "value": 0.612})", R"("metric": "mAP50-95", "value": 0.453})"}));
  // Without a header a size is not a metric.
  EXPECT_EQ(Render("      1/100      2.1G      1.234      2.345      1.456         32        640"),
            V{});
}

TEST(Extract, MMEngine) {
  EXPECT_EQ(Render("11/29 10:00:00 - mmengine - INFO - Epoch(train)  [1][ 50/500]  base_lr: "
                   "2.0000e-02 lr: 2.0000e-02  eta: 0:10:00  time: 0.5  data_time: 0.01  memory: "
                   "3000  grad_norm: 5.1  loss: 1.2345  loss_cls: 0.5"),
            (V{R"("metric": "epoch", "value": 1, "step": 50})",
               R"("metric": "step", "value": 50, "step": 50})",
               R"("metric": "base_lr", "value": 0.02, "step": 50})",
               R"("metric": "learning_rate", "value": 0.02, "step": 50})",
               R"("metric": "time", "value": 0.5, "step": 50})",
               R"("metric": "data_time", "value": 0.01, "step": 50})",
               R"("metric": "memory", "value": 3000, "step": 50})",
               R"("metric": "grad_norm", "value": 5.1, "step": 50})",
               R"("metric": "loss", "value": 1.2345, "step": 50})",
               R"("metric": "loss_cls", "value": 0.5, "step": 50})"}));
  EXPECT_EQ(Render("Epoch(val) [1][100/100]    coco/bbox_mAP: 0.3740  coco/bbox_mAP_50: 0.5810"),
            (V{R"("metric": "epoch", "value": 1})", R"("metric": "coco/bbox_mAP", "value": 0.374})",
               R"("metric": "coco/bbox_mAP_50", "value": 0.581})"}));
}

TEST(Extract, GenericForms) {
  EXPECT_EQ(Render("step=10 loss=0.5 acc=0.9"),
            (V{R"("metric": "step", "value": 10, "step": 10})",
               R"("metric": "loss", "value": 0.5, "step": 10})",
               R"("metric": "acc", "value": 0.9, "step": 10})"}));
  EXPECT_EQ(Render("loss: 0.5 accuracy: 97.5%"),
            (V{R"("metric": "loss", "value": 0.5})", R"("metric": "accuracy", "value": 97.5})"}));
  EXPECT_EQ(Render("| epoch 3 | loss 2.31 | ppl 10.07 | wps 12345 |"),
            (V{R"("metric": "epoch", "value": 3})", R"("metric": "loss", "value": 2.31})",
               R"("metric": "ppl", "value": 10.07})", R"("metric": "wps", "value": 12345})"}));
  EXPECT_EQ(Render("Epoch [1/5], Step [100/600], Loss: 0.2345"),
            (V{R"("metric": "epoch", "value": 1, "step": 100})",
               R"("metric": "step", "value": 100, "step": 100})",
               R"("metric": "loss", "value": 0.2345, "step": 100})"}));
  EXPECT_EQ(Render("[rank0]: Validation loss: 0.25"),
            (V{R"("metric": "Validation_loss", "value": 0.25})"}));
}

TEST(Extract, NothingFromProseAndIdentities) {
  for (std::string_view line : {
           "Loading checkpoint shards: 3 files",
           "Resuming from epoch 3",
           "Step 5 of the pipeline: cleaning",
           "2026-11-30 10:00:00,123 - INFO - Started worker pid=1234 rank=0",
           "MASTER_ADDR=10.0.0.1 MASTER_PORT=29500 WORLD_SIZE=8 RANK=0",
           "Using device cuda:0, torch 1.13.1, python 3.11.2",
           "  Num examples = 10,000",
           "  Num Epochs = 3",
           "  Total optimization steps = 3,000",
           "  Number of trainable parameters = 124,439,808",
           "learning_rate=5e-05,",
           "Saving model checkpoint to /out/checkpoint-500",
           "listening on 127.0.0.1:9300",
           "segfault at 7f3a2c001000 ip 00007f3a2c001000 sp 00007ffd",
           "Model summary: 225 layers, 3157200 parameters, 3157184 gradients, 8.9 GFLOPs",
           "found vocab_size = 65 (inside data/shakespeare_char/meta.pkl)",
           "seed: 42",
           "eta: 0:10:00",
           "Epoch 3/10 done",
           "Step 1: check that the problem has not already been resolved",
           "\tlet g:termdebug_map_K = 0",
           "#8\tNEW    cov: 94 ft: 134 corp: 3/6b lim: 4 exec/s: 0 rss: 31Mb L: 3/3 MS: 4",
           "[ 8123.401225] python invoked oom-killer: gfp_mask=0x140cca(GFP), order=0, "
           "oom_score_adj=0",
           "[W socket.cpp:601] [c10d] connect to [localhost]:29500 (errno: 99 - Cannot assign)",
       }) {
    EXPECT_EQ(Render(line), V{}) << line;
  }
}

TEST(Extract, ConfigDumpsAreNotMetrics) {
  for (std::string_view line : {
           "Namespace(batch_size=64, dataset='imagenet', epochs=90, lr=0.1, seed=42)",
           "engine/trainer: task=detect, epochs=3, batch=16, amp=True, lr0=0.01, momentum=0.937",
           "optim_wrapper = dict(type='OptimWrapper', optimizer=dict(type='SGD', lr=0.02))",
           "json = {\"train_batch_size\": 64, \"optimizer\": {\"params\": {\"lr\": 0.0001}}}",
           "max_grad_norm=1.0,",
           "  \"learning_rate\": 5e-05,",
           "eval_interval = 250 # keep frequent because we'll overfit",
       }) {
    EXPECT_EQ(Render(line), V{}) << line;
  }
  // A key written twice names no one value; the rest of the line stands.
  EXPECT_EQ(Render("AdamW(lr=0.000119, momentum=0.9) 57 weight(decay=0.0), 63 bias(decay=0.0)"),
            (V{R"("metric": "learning_rate", "value": 0.000119})",
               R"("metric": "momentum", "value": 0.9})"}));
}

TEST(Extract, Fairseq) {
  EXPECT_EQ(Render("2024-05-01 10:05:00 | INFO | train | epoch 001 | loss 7.1 | ppl 119.5 | "
                   "num_updates 1000 | lr 0.0005 | gnorm 1.1"),
            (V{R"("metric": "epoch", "value": 1, "step": 1000})",
               R"("metric": "loss", "value": 7.1, "step": 1000})",
               R"("metric": "ppl", "value": 119.5, "step": 1000})",
               R"("metric": "step", "value": 1000, "step": 1000})",
               R"("metric": "learning_rate", "value": 0.0005, "step": 1000})",
               R"("metric": "grad_norm", "value": 1.1, "step": 1000})"}));
}

TEST(Extract, TensorFlowPaddleMindSpore) {
  EXPECT_EQ(Render("INFO:tensorflow:loss = 0.6931, step = 101 (0.826 sec)"),
            (V{R"("metric": "loss", "value": 0.6931, "step": 101})",
               R"("metric": "step", "value": 101, "step": 101})"}));
  EXPECT_EQ(Render("INFO:tensorflow:global_step/sec: 121.065"),
            (V{R"("metric": "global_step/sec", "value": 121.065})"}));
  EXPECT_EQ(Render("[2024/05/01 10:00:00] ppocr INFO: epoch: [1/500], global_step: 10, lr: "
                   "0.001000, loss: 33.375458, avg_batch_cost: 1.11834 s, ips: 7.15350 samples/s, "
                   "eta: 3 days, 0:00:00"),
            (V{R"("metric": "epoch", "value": 1, "step": 10})",
               R"("metric": "step", "value": 10, "step": 10})",
               R"("metric": "learning_rate", "value": 0.001, "step": 10})",
               R"("metric": "loss", "value": 33.375458, "step": 10})",
               R"("metric": "avg_batch_cost", "value": 1.11834, "step": 10})",
               R"("metric": "ips", "value": 7.1535, "step": 10})"}));
  EXPECT_EQ(Render("epoch: 1 step: 1875, loss is 0.1234"),
            (V{R"("metric": "epoch", "value": 1, "step": 1875})",
               R"("metric": "step", "value": 1875, "step": 1875})",
               R"("metric": "loss", "value": 0.1234, "step": 1875})"}));
  // torchvision's reference scripts: the value, then the running average.
  EXPECT_EQ(Render("Epoch: [0]  [ 10/1466]  eta: 2:00:00  lr: 0.1  img/s: 12.3  loss: 2.1234 "
                   "(2.3012)  acc1: 1.5625 (0.7812)  time: 4.9012  data: 3.2  max mem: 1234"),
            (V{R"("metric": "epoch", "value": 0})", R"("metric": "learning_rate", "value": 0.1})",
               R"("metric": "img/s", "value": 12.3})", R"("metric": "loss", "value": 2.1234})",
               R"("metric": "acc1", "value": 1.5625})", R"("metric": "time", "value": 4.9012})",
               R"("metric": "data", "value": 3.2})", R"("metric": "max_mem", "value": 1234})"}));
  EXPECT_EQ(Render("the batch size is 32"), V{});
  EXPECT_EQ(Render("WARNING: loss is nan at step 900, skipping batch"), V{});
}

TEST(Extract, TrlKeysAndWindowsLineEnds) {
  EXPECT_EQ(
      Render("{'loss': 0.69, 'rewards/chosen': -0.5, 'logps/rejected': -120.25, "
             "'epoch': 0.1}\r"),
      (V{R"("metric": "loss", "value": 0.69})", R"("metric": "rewards/chosen", "value": -0.5})",
         R"("metric": "logps/rejected", "value": -120.25})",
         R"("metric": "epoch", "value": 0.1})"}));
}

// Names inside a path of metric groups, phases excepted (OLMo, verl).
TEST(Extract, PathGroupsOfNames) {
  EXPECT_EQ(Render("    optim/total_grad_norm=231.7"),
            (V{R"("metric": "grad_norm", "value": 231.7})"}));
  EXPECT_EQ(Render("    train/CrossEntropyLoss=12.18"),
            (V{R"("metric": "loss", "value": 12.18})"}));
  EXPECT_EQ(Render("step:83 - actor/grad_norm:0.006 - actor/lr:0.001"),
            (V{R"("metric": "step", "value": 83, "step": 83})",
               R"("metric": "grad_norm", "value": 0.006, "step": 83})",
               R"("metric": "learning_rate", "value": 0.001, "step": 83})"}));
  // A validation loss stays one.
  EXPECT_EQ(Render("epoch=1 val/loss=0.5"),
            (V{R"("metric": "epoch", "value": 1})", R"("metric": "val/loss", "value": 0.5})"}));
}

// litgpt: "loss train (curr)" after a "step N:" label.
TEST(Extract, QualifierInParenthesesAfterAStepLabel) {
  EXPECT_EQ(
      Render("Ep 1 | iter 4 | step 1: loss train (curr): 1.585, val (prev val iter): None"),
      (V{R"("metric": "Ep", "value": 1, "step": 4})", R"("metric": "step", "value": 4, "step": 4})",
         R"("metric": "loss", "value": 1.585, "step": 4})"}));
}

// A dict by parameter-group index gives its first group's value; a dict of
// named parts gives none.
TEST(Extract, DictByParameterGroup) {
  EXPECT_EQ(Render("step=642 grad_norm={'0_default': 2.15, '1_fp32': 0.0} x=1"),
            (V{R"("metric": "step", "value": 642, "step": 642})",
               R"("metric": "grad_norm", "value": 2.15, "step": 642})",
               R"("metric": "x", "value": 1, "step": 642})"}));
  EXPECT_EQ(Render("step=642 loss={'ce': 2.15, 'kl': 0.3}"),
            (V{R"("metric": "step", "value": 642, "step": 642})",
               R"("metric": "ce", "value": 2.15, "step": 642})",
               R"("metric": "kl", "value": 0.3, "step": 642})"}));
}

// Only the three training metrics of a line, as "name=value".
V Training(std::string_view line) {
  LogMetricExtractor x;
  std::vector<MetricSample> samples;
  x.Extract(line, &samples);
  V out;
  for (const MetricSample& s : samples) {
    if (s.name != "loss" && s.name != "learning_rate" && s.name != "grad_norm") continue;
    std::ostringstream v;
    v << s.name << "=" << s.value;
    out.push_back(v.str());
  }
  return out;
}

// Keys padded to a column before " : " (DLLogger): each value ends at the
// next padded key, and the value after a key is never taken by the name
// before it.
TEST(Extract, PaddedKeysInARow) {
  EXPECT_EQ(Training("DLL 2020-11-30 10:00:00.1 - Training Epoch: 0 Training Iteration: 10  "
                     "average_loss : 10.8  step_loss : 10.7  learning_rate : 5.9e-06"),
            (V{"loss=10.7", "learning_rate=5.9e-06"}));
  EXPECT_EQ(Training("[0]:LOG Wed Dec 21 00:12:27 2022 - (0, 14) step_loss : 11.2500 "
                     "learning_rate : 2.80e-06 throughput : 6497.86"),
            (V{"loss=11.25", "learning_rate=2.8e-06"}));
}

// Marian: cells between " : ", "Cost" (its average times the label count)
// and "L.r."; a validation line gives nothing.
TEST(Extract, MarianCells) {
  EXPECT_EQ(Training("[2018-02-22 20:39:54] Ep. 1 : Up. 500 : Sen. 350559 : Cost 9.89 * "
                     "10696858 : Time 482.42s : 22173.46 words/s : L.r. 9.3750e-06"),
            (V{"loss=9.89", "learning_rate=9.375e-06"}));
  EXPECT_EQ(Training("[2021-05-29 05:19:49] Ep. 39 : Up. 77500 : Sen. 90,243 : Cost 2.27543092 * "
                     "1,854,596 @ 4,069 after 286,959,622 : Time 230.56s : 8043.80 words/s : "
                     "gNorm 0.4567 : L.r. 1.3631e-04"),
            (V{"loss=2.27543", "grad_norm=0.4567", "learning_rate=0.00013631"}));
  EXPECT_EQ(Training("[2019-03-16 21:39:02] [valid] Ep. 7 : Up. 5000 : cross-entropy : 137.649 : "
                     "new best"),
            V{});
}

// "Cost", "lrate" and "L.r." name the loss and the rate only whole: a
// "batch_cost" is a time.
TEST(Extract, BareNames) {
  EXPECT_EQ(Training("epoch    1 | iter   1/48 | loss 40.97 | mel loss 35.04 | lrate 3.16e-06"),
            (V{"loss=40.97", "learning_rate=3.16e-06"}));
  EXPECT_EQ(Training("epoch: [1/500], global_step: 10, lr: 0.001000, loss: 33.37, "
                     "avg_batch_cost: 1.11834 s, batch_cost: 0.5 s"),
            (V{"learning_rate=0.001", "loss=33.37"}));
  // "Cost" before its number beside other pairs (PaddlePaddle v2's event
  // handler).
  EXPECT_EQ(Training("Pass 0, Batch 100, Cost 2.261713, {'classification_error_evaluator': "
                     "0.8359375}"),
            (V{"loss=2.26171"}));
  EXPECT_EQ(Training("Test with Pass 0, Cost 0.32, accuracy 0.9"), V{});
}

// Names joined by '-' own as many numbers: insightface's "lr-batch-epoch".
TEST(Extract, JoinedNamesOwnTheirNumbers) {
  EXPECT_EQ(Training("lr-batch-epoch: 0.01 8999 0"), (V{"learning_rate=0.01"}));
  // The counts disagree, or more follows: no value is taken.
  EXPECT_EQ(Training("lr-batch-epoch: 0.01 8999"), V{});
  EXPECT_EQ(Training("lr-batch: 0.01 8999 done"), V{});
  EXPECT_EQ(Training("2020-01-01T10:00:00 start"), V{});
  // insightface's MXNet Speedometer calls its loss "lossvalue".
  EXPECT_EQ(Training("INFO:root:Epoch[0] Batch [8880-8900]\tSpeed: 1410.46 samples/sec\t"
                     "acc=0.000000\tlossvalue=41.974941"),
            (V{"loss=41.9749"}));
}

// ESPnet2 names each optimizer's parameter groups; the first is the rate.
TEST(Extract, EspnetOptimizerGroups) {
  EXPECT_EQ(
      Training("optim_step_time=0.022, optim0_lr0=3.765e-04, optim1_lr0=1e-3, train_time=1.1"),
      (V{"learning_rate=0.0003765"}));
}

// A key inside "name[...]" is the group's: icefall's batch loss, not its
// running "tot_loss[...]" of the same keys.
TEST(Extract, KeysInNamedGroups) {
  EXPECT_EQ(Training("2022-06-08 08:01:22,072 INFO [train.py:815] Epoch 1, batch 5, "
                     "loss[loss=0.6028, simple_loss=1.206, over 5392.00 frames.], "
                     "tot_loss[loss=0.7444, simple_loss=1.489, over 31213.18 frames.], "
                     "batch size: 18, lr: 3.00e-03"),
            (V{"loss=0.6028", "learning_rate=0.003"}));
  EXPECT_EQ(Training("Epoch 0, batch 500, loss[ctc_loss=0.7647, att_loss=0.7367, loss=0.7423, "
                     "over 2223 frames.], tot_loss[ctc_loss=1.098, loss=1.088, over 4382 frames.]"),
            (V{"loss=0.7423"}));
  // Brackets closed before the key, or a '[' after no name, are no group.
  EXPECT_EQ(Training("[2022-06-08 08:01:22] [train.py:815] loss=0.5 lr=0.1"),
            (V{"loss=0.5", "learning_rate=0.1"}));
}

// Words and numbers side by side: a lower-case word before "loss" names a
// part of it; a number after "Step:" is the step's, not the next name's.
TEST(Extract, WordRunParts) {
  EXPECT_EQ(Training("Epoch 34, batch 53910, batch avg ctc loss 0.0332, batch avg att loss "
                     "0.0225, batch avg loss 0.0257, total avg loss: 0.0380, batch size: 17"),
            (V{"loss=0.0257"}));
  EXPECT_EQ(Training("model_training_utils.py:538] Step: 35 Lr 1.23066e-05 Loss scale 32768"),
            (V{"learning_rate=1.23066e-05"}));
  EXPECT_EQ(Training("DEBUG TRAIN Batch 7/100 loss nan lr 0.00055784 grad_norm nan rank 2"),
            (V{"loss=nan", "learning_rate=0.00055784", "grad_norm=nan"}));
}

// " / " between pairs (NVIDIA's TF2 BERT) ends a value as Keras' " - " does.
TEST(Extract, SlashBetweenPairs) {
  EXPECT_EQ(Training("Train Step: 35/90  / loss = 11.15625 / time = 0.133 sec"),
            (V{"loss=11.1562"}));
}

TEST(Extract, ColouredTqdmBar) {
  EXPECT_EQ(Render("\x1b[32m 50%|\x1b[0m\x1b[32m█████     \x1b[0m| 5/10 [00:01<00:01,  4.00it/s]"),
            (V{R"("metric": "step", "value": 5, "step": 5})",
               R"("metric": "iterations_per_second", "value": 4, "step": 5})"}));
}

TEST(Extract, BoundedWorkPerSegment) {
  std::string line;
  for (int i = 0; i < 100000; ++i) line += "loss=1 ";
  LogMetricExtractor x;
  std::vector<MetricSample> out;
  x.Extract(line, &out);
  EXPECT_LE(out.size(), 64u);
}

TEST(Extract, NoAllocationOnLinesWithNothing) {
  const std::vector<std::string_view> lines = {
      "Loading checkpoint shards: 3 files",
      "2026-11-30 10:00:00,123 - INFO - Started worker pid=1234 rank=0",
      "MASTER_ADDR=10.0.0.1 MASTER_PORT=29500 WORLD_SIZE=8 RANK=0",
      "Map: 100%|██████████| 1000/1000 [00:00<00:00, 12345.67 examples/s]",
      "\x1b[33mWARNING\x1b[0m: the value of x=3 is odd: 5 things",
      "  Num Epochs = 3",
      "a plain sentence without any digit or separator at all",
      "Total params: 101770 (397.54 KB)",
  };
  LogMetricExtractor x;
  std::vector<MetricSample> out;
  out.reserve(16);
  for (std::string_view line : lines) x.Extract(line, &out);  // warm: buffers grow once
  ASSERT_TRUE(out.empty());
  long before = g_allocations.load();
  for (int round = 0; round < 10; ++round) {
    for (std::string_view line : lines) x.Extract(line, &out);
  }
  EXPECT_EQ(g_allocations.load() - before, 0);
  EXPECT_TRUE(out.empty());
  // A fresh extractor allocates nothing for a line it rejects at once.
  LogMetricExtractor fresh;
  before = g_allocations.load();
  fresh.Extract("a plain sentence without any digit or separator at all", &out);
  fresh.Extract("Epoch finished in 12 seconds", &out);
  EXPECT_EQ(g_allocations.load() - before, 0);
}

TEST(Extract, NoStepCarriedOverLines) {
  LogMetricExtractor x;
  EXPECT_EQ(Render(&x, "step=5 loss=1"), (V{R"("metric": "step", "value": 5, "step": 5})",
                                            R"("metric": "loss", "value": 1, "step": 5})"}));
  EXPECT_EQ(Render(&x, "loss=1"), (V{R"("metric": "loss", "value": 1})"}));
}

TEST(Extract, ArbitraryBytesNeverCrash) {
  std::mt19937_64 rng(42);
  const std::string alphabet = "0123456789.eE+-=:|/[](){}',\" \t\r\x1b%itsloaepchn_-\xe2\x96\x88";
  LogMetricExtractor x;
  std::vector<MetricSample> out;
  for (int round = 0; round < 3000; ++round) {
    std::string line(rng() % 300, '\0');
    bool raw = round % 2 == 0;
    for (char& c : line) {
      c = raw ? static_cast<char>(rng()) : alphabet[rng() % alphabet.size()];
    }
    out.clear();
    x.Extract(line, &out);
    for (const MetricSample& s : out) EXPECT_FALSE(s.name.empty());
  }
  std::string big(1 << 20, 'a');
  for (size_t i = 0; i < big.size(); i += 7) big[i] = "=:|/1 .\r"[i % 8];
  out.clear();
  x.Extract(big, &out);
  EXPECT_LE(out.size(), big.size());
}

// The corpus (tests/data/training/*/<name>.log against <name>.expected.jsonl)
// is checked by inspector_test.cc, through the whole `vigil inspect-log` path.

}  // namespace
}  // namespace vigil::parse::training
