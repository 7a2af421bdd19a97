// Unit tests of job_settings.h: the rules one at a time (precedence,
// launchers, flag forms, overrides, env, each config format, log dumps) and
// the bounds. The real inputs are in settings_corpus_test.cc.
#include "parse/settings/job_settings.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace vigil::parse::settings {
namespace {

using Argv = std::vector<std::string>;

std::string ValueOf(const JobSettings& s, std::string_view key) {
  const JobSetting* j = s.Find(key);
  return j == nullptr ? "<absent>" : j->value;
}

// One config file's settings; the read must succeed.
JobSettings Config(std::string path, std::string text) {
  Result<JobSettings> r = SettingsFromConfig({std::move(path), std::move(text)});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : JobSettings();
}

TEST(JobSettings, LogBeatsArgvBeatsConfigAndAllAreKept) {
  JobSettingsInput in;
  in.argv = {{"python", "train.py", "--lr", "3e-3"}};
  in.configs = {{"cfg.yaml", "optimizer:\n  lr: 1e-3\n"}};
  in.log_lines = {"Namespace(lr=0.002, batch_size=32)"};
  JobSettings s = ParseJobSettings(in);
  const JobSetting* lr = s.Find("learning_rate");
  ASSERT_NE(lr, nullptr);
  EXPECT_EQ(lr->value, "0.002");
  EXPECT_EQ(lr->source, "log");
  std::vector<const JobSetting*> all = s.FindAll("learning_rate");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1]->source, "argv");
  EXPECT_EQ(all[1]->raw_key, "--lr");
  EXPECT_EQ(all[2]->source, "config:cfg.yaml");
  EXPECT_EQ(all[2]->raw_key, "optimizer.lr");
  EXPECT_DOUBLE_EQ(*s.Number("learning_rate"), 0.002);
  EXPECT_EQ(s.Find("warmup_steps"), nullptr);  // never invented
  EXPECT_FALSE(s.Number("seed").has_value());
}

TEST(JobSettings, ArgvBeatsConfig) {
  JobSettingsInput in;
  in.argv = {{"python", "train.py", "--config", "c.json", "--batch-size", "16"}};
  in.configs = {{"c.json", R"({"batch_size": 64, "num_workers": 2})"}};
  JobSettings s = ParseJobSettings(in);
  EXPECT_EQ(ValueOf(s, "batch_size"), "16");
  EXPECT_EQ(ValueOf(s, "num_workers"), "2");
  EXPECT_EQ(s.FindAll("batch_size").size(), 2u);
}

TEST(JobSettings, RanksWithTheSameArgvGiveOneSetting) {
  JobSettingsInput in;
  Argv rank = {"/usr/bin/python3", "-u", "train.py", "--num-workers", "2"};
  in.argv = {{"torchrun", "--nproc_per_node=8", "train.py", "--num-workers", "2"}, rank, rank};
  JobSettings s = ParseJobSettings(in);
  EXPECT_EQ(s.FindAll("num_workers").size(), 1u);
  EXPECT_EQ(ValueOf(s, "nproc_per_node"), "8");
  EXPECT_EQ(s.Find("nproc_per_node")->launcher, "torchrun");
  EXPECT_EQ(s.Find("num_workers")->launcher, "");
}

TEST(Argv, LauncherOptionsAreTheLaunchers) {
  JobSettings s = SettingsFromArgv({"deepspeed", "--num_gpus", "8", "--master_port", "29500",
                                    "train.py", "--deepspeed", "ds.json", "--lr=3e-4"});
  EXPECT_EQ(ValueOf(s, "nproc_per_node"), "8");
  EXPECT_EQ(s.Find("nproc_per_node")->raw_key, "--num_gpus");
  EXPECT_EQ(s.Find("nproc_per_node")->launcher, "deepspeed");
  EXPECT_EQ(ValueOf(s, "learning_rate"), "3e-4");
  // A script's own --nproc_per_node is the script's, not a launcher's.
  JobSettings t = SettingsFromArgv({"python", "train.py", "--nproc_per_node", "4"});
  EXPECT_EQ(t.Find("nproc_per_node")->launcher, "");
  // The launcher's --mixed_precision, and nothing of the launcher read as the
  // script's (accelerate's --num_processes 2 is not the script's).
  JobSettings a = SettingsFromArgv({"accelerate", "launch", "--mixed_precision", "bf16",
                                    "--num_processes", "2", "train.py", "--seed", "1"});
  EXPECT_EQ(ValueOf(a, "precision"), "bf16");
  EXPECT_EQ(a.Find("precision")->launcher, "accelerate");
  EXPECT_EQ(ValueOf(a, "seed"), "1");
  EXPECT_EQ(a.all().size(), 3u);
}

TEST(Argv, ConsoleScriptLaunchersAsProcShowsThem) {
  // /proc/<pid>/cmdline of `torchrun ...`: the interpreter, then the script.
  JobSettings s =
      SettingsFromArgv({"/usr/bin/python3", "/usr/local/bin/torchrun", "--nproc_per_node=8",
                        "--master_port", "29500", "train.py", "--lr", "0.1"});
  EXPECT_EQ(s.Find("nproc_per_node")->launcher, "torchrun");
  EXPECT_EQ(ValueOf(s, "learning_rate"), "0.1");
  JobSettings a = SettingsFromArgv({"/opt/conda/bin/python", "/opt/conda/bin/accelerate", "launch",
                                    "--multi_gpu", "--num_processes", "4", "sft.py", "--bf16"});
  EXPECT_EQ(a.Find("nproc_per_node")->launcher, "accelerate");
  EXPECT_EQ(ValueOf(a, "precision"), "bf16");
  EXPECT_EQ(a.Find("precision")->launcher, "");
}

TEST(JobSettings, ManyRanksStayCheap) {
  // 64 processes of 4,096 arguments: repeats are dropped by hash, and the
  // bound on settings holds.
  Argv argv = {"python", "train.py"};
  for (int i = 0; i < 4094; ++i) argv.push_back(i % 2 == 0 ? "--seed" : std::to_string(i));
  JobSettingsInput in;
  in.argv.assign(64, argv);
  JobSettingsLimits limits;
  limits.max_settings = 100;
  JobSettings s = ParseJobSettings(in, limits);
  EXPECT_EQ(s.all().size(), 100u);
  EXPECT_EQ(ValueOf(s, "seed"), "1");
}

TEST(Argv, WrappersAreSkippedToTheJob) {
  JobSettings s = SettingsFromArgv(
      {"srun", "--ntasks=8", "-N", "2", "python", "train.py", "--lr", "0.1", "-b", "64", "-j8"});
  EXPECT_EQ(ValueOf(s, "learning_rate"), "0.1");
  EXPECT_EQ(ValueOf(s, "batch_size"), "64");
  EXPECT_EQ(ValueOf(s, "num_workers"), "8");
  EXPECT_EQ(s.Find("num_workers")->raw_key, "-j");
  // python -c runs code: no arguments of a program.
  EXPECT_TRUE(SettingsFromArgv({"python", "-c", "import x", "--lr", "1"}).empty());
  EXPECT_TRUE(ConfigReferencesFromArgv({"python", "-c", "x.yaml", "a.yaml"}).empty());
}

TEST(Argv, BooleanFlags) {
  JobSettings s =
      SettingsFromArgv({"fairseq-train", "--fp16", "data-bin", "--gradient_checkpointing"});
  EXPECT_EQ(ValueOf(s, "precision"), "fp16");
  EXPECT_EQ(ValueOf(s, "gradient_checkpointing"), "true");
  EXPECT_EQ(*s.Number("gradient_checkpointing"), 1);
  // --fp16 False turns it off: no precision is claimed.
  EXPECT_EQ(SettingsFromArgv({"train.py", "--fp16", "False"}).Find("precision"), nullptr);
  JobSettings off = SettingsFromArgv({"train.py", "--gradient_checkpointing", "False"});
  EXPECT_EQ(*off.Number("gradient_checkpointing"), 0);
  // Value-style precision as written.
  EXPECT_EQ(ValueOf(SettingsFromArgv({"main.py", "fit", "--trainer.precision", "bf16-mixed"}),
                    "precision"),
            "bf16-mixed");
  EXPECT_EQ(ValueOf(SettingsFromArgv({"train.py", "--precision", "16-mixed"}), "precision"),
            "16-mixed");
  EXPECT_EQ(ValueOf(SettingsFromArgv({"train.py", "mixed_precision=bf16"}), "precision"), "bf16");
}

TEST(Argv, HydraOverrides) {
  JobSettings s = SettingsFromArgv(
      {"python", "megatron_gpt_pretraining.py", "+trainer.precision=bf16", "++model.optim.lr=3e-4",
       "model.micro_batch_size=4", "~model.foo", "model.validation_ds.batch_size=1",
       "model.tokenizer.model=/t/tok.model", "--multirun", "seed=5"});
  EXPECT_EQ(ValueOf(s, "precision"), "bf16");
  EXPECT_EQ(s.Find("precision")->raw_key, "+trainer.precision");
  EXPECT_EQ(ValueOf(s, "learning_rate"), "3e-4");
  EXPECT_EQ(ValueOf(s, "batch_size"), "4");  // not the validation set's 1
  EXPECT_EQ(s.FindAll("batch_size").size(), 1u);
  EXPECT_EQ(s.Find("model"), nullptr);  // a tokenizer file is not the model
  EXPECT_EQ(ValueOf(s, "seed"), "5");   // not --multirun's value
}

TEST(Argv, NegativeNumbersAreValues) {
  JobSettings s = SettingsFromArgv({"train.py", "--max_steps", "-1", "--seed", "-3"});
  EXPECT_EQ(ValueOf(s, "max_steps"), "-1");
  EXPECT_EQ(*s.Number("seed"), -3);
}

TEST(Argv, BoundsHold) {
  JobSettingsLimits limits;
  limits.max_args = 4;
  limits.max_value_bytes = 8;
  Argv argv = {"train.py", "--model", std::string(100, 'm'), "--lr", "1", "--seed", "2"};
  JobSettings s = SettingsFromArgv(argv, limits);
  EXPECT_EQ(ValueOf(s, "model"), std::string(8, 'm'));
  EXPECT_EQ(ValueOf(s, "learning_rate"), "<absent>");  // its value, argument 4, is not read
  ASSERT_EQ(s.notes().size(), 1u);
  EXPECT_NE(s.notes()[0].find("read the first 4"), std::string::npos);
}

TEST(Argv, ConfigReferences) {
  auto refs = ConfigReferencesFromArgv({"python", "train.py", "-c", "a.yml", "--cfg=b.yaml",
                                        "--data_path", "data.json", "--config-path", "conf",
                                        "--config-name", "gpt", "extra.toml"});
  std::vector<std::string> paths;
  for (const auto& r : refs) paths.push_back(r.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"a.yml", "b.yaml", "extra.toml", "conf/gpt.yaml"}));
  // The script itself is no config, nor a data=... override.
  EXPECT_TRUE(ConfigReferencesFromArgv({"python", "tools/train.py", "data=coco.yaml"}).empty());
  // HF's --deepspeed takes a JSON path; DALLE's bare --deepspeed names none.
  EXPECT_EQ(ConfigReferencesFromArgv({"deepspeed", "t.py", "--deepspeed", "ds.json"}).size(), 1u);
  EXPECT_TRUE(ConfigReferencesFromArgv({"deepspeed", "t.py", "--deepspeed"}).empty());
}

TEST(Env, KeepsTheListedVariablesOnly) {
  std::string environ(
      "NCCL_DEBUG=INFO\0HF_TOKEN=secret\0CUDA_VISIBLE_DEVICES=0,1\0"
      "OMP_NUM_THREADS=4\0TORCH_NCCL_ASYNC_ERROR_HANDLING=1\0PATH=/bin\0",
      110);
  JobSettings s =
      SettingsFromEnv({{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}}, environ);
  EXPECT_EQ(ValueOf(s, "env.NCCL_DEBUG"), "INFO");
  EXPECT_EQ(ValueOf(s, "env.CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(*s.Number("env.OMP_NUM_THREADS"), 4);
  EXPECT_EQ(ValueOf(s, "env.TORCH_NCCL_ASYNC_ERROR_HANDLING"), "1");
  EXPECT_EQ(ValueOf(s, "env.PYTORCH_CUDA_ALLOC_CONF"), "expandable_segments:True");
  EXPECT_EQ(s.Find("env.HF_TOKEN"), nullptr);  // secrets are never read
  EXPECT_EQ(s.Find("env.PATH"), nullptr);
  // `env` output: one a line.
  EXPECT_EQ(ValueOf(SettingsFromEnv({}, "NCCL_IB_DISABLE=1\nX=2\n"), "env.NCCL_IB_DISABLE"), "1");
}

TEST(Config, YamlNestingListsAndScalars) {
  std::string yaml =
      "# axolotl-style\n"
      "base_model: NousResearch/Llama-2-7b-hf\n"
      "datasets:\n"
      "  - path: mhenrichsen/alpaca_2k_test\n"
      "    type: alpaca\n"
      "micro_batch_size: 2\n"
      "gradient_accumulation_steps: 4\n"
      "learning_rate: 0.0002   # comment\n"
      "bf16: auto\n"
      "fp16:\n"
      "gradient_checkpointing: true\n"
      "trainer:\n"
      "  precision: \"bf16-mixed\"\n"
      "  max_epochs: !!int 3\n"
      "notes: |\n"
      "  lr: 9\n"
      "model:\n"
      "  optim: {lr: 5}\n";
  JobSettings s = Config("/w/cfg.yml", yaml);
  EXPECT_EQ(ValueOf(s, "model"), "NousResearch/Llama-2-7b-hf");
  EXPECT_EQ(ValueOf(s, "batch_size"), "2");
  EXPECT_EQ(ValueOf(s, "gradient_accumulation_steps"), "4");
  EXPECT_EQ(ValueOf(s, "learning_rate"), "0.0002");
  EXPECT_EQ(ValueOf(s, "gradient_checkpointing"), "true");
  EXPECT_EQ(ValueOf(s, "precision"), "bf16-mixed");  // bf16: auto names none
  EXPECT_EQ(s.FindAll("precision").size(), 1u);
  EXPECT_EQ(ValueOf(s, "epochs"), "3");
  EXPECT_EQ(s.FindAll("learning_rate").size(), 1u);  // not the block scalar's, not a flow map's
  EXPECT_EQ(s.Find("batch_size")->source, "config:/w/cfg.yml");
}

TEST(Config, YamlDepthIsBounded) {
  std::string yaml;
  for (int i = 0; i < 40; ++i) yaml += std::string(static_cast<size_t>(i) * 2, ' ') + "k:\n";
  yaml += std::string(80, ' ') + "lr: 1\n";
  JobSettingsLimits limits;
  limits.max_config_depth = 8;
  Result<JobSettings> r = SettingsFromConfig({"deep.yaml", yaml}, limits);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());  // lr sits deeper than 8
}

TEST(Config, JsonErrorsAndBounds) {
  EXPECT_FALSE(SettingsFromConfig({"bad.json", "{\"lr\": "}).ok());
  std::string deep(100, '[');
  EXPECT_FALSE(SettingsFromConfig({"deep.json", deep}).ok());
  JobSettingsLimits limits;
  limits.max_config_bytes = 10;
  Result<JobSettings> big = SettingsFromConfig({"big.json", "{\"lr\": 0.1, \"x\": 1}"}, limits);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted);
  // In ParseJobSettings a bad file is a note, and the rest is read.
  JobSettingsInput in;
  in.configs = {{"bad.json", "{"}, {"ok.json", "{\"seed\": 7}"}};
  JobSettings s = ParseJobSettings(in);
  EXPECT_EQ(ValueOf(s, "seed"), "7");
  ASSERT_EQ(s.notes().size(), 1u);
  EXPECT_NE(s.notes()[0].find("config:bad.json"), std::string::npos);
}

TEST(Config, TomlTables) {
  std::string toml =
      "title = \"run\"\n"
      "[training]\n"
      "lr = 1e-4  # initial\n"
      "batch_size = 32\n"
      "layers = [1, 2,\n 3]\n"
      "[[callbacks]]\n"
      "seed = 9\n"
      "[optimizer.\"params\"]\n"
      "warmup_steps = 100\n"
      "name = \"run (a\"\n"
      "seed = 3\n";
  JobSettings s = Config("run.toml", toml);
  EXPECT_EQ(ValueOf(s, "learning_rate"), "1e-4");
  EXPECT_EQ(s.Find("learning_rate")->raw_key, "training.lr");
  EXPECT_EQ(ValueOf(s, "batch_size"), "32");
  EXPECT_EQ(ValueOf(s, "seed"), "3");  // not 9, in an array of tables; "(a" opens nothing
  EXPECT_EQ(ValueOf(s, "warmup_steps"), "100");
}

TEST(Config, PythonConfigurator) {
  // nanoGPT's config/train_shakespeare_char.py style.
  std::string py =
      "out_dir = 'out-shakespeare-char'\n"
      "gradient_accumulation_steps = 1\n"
      "batch_size = 64\n"
      "learning_rate = 1e-3 # with baby networks can afford to go a bit higher\n"
      "max_iters = 5000\n"
      "if True:\n"
      "    batch_size = 1\n"
      "dtype = 'bfloat16' if torch.cuda.is_available() else 'float16'\n";
  JobSettings s = Config("config/train_shakespeare_char.py", py);
  EXPECT_EQ(ValueOf(s, "batch_size"), "64");
  EXPECT_EQ(s.FindAll("batch_size").size(), 1u);
  EXPECT_EQ(ValueOf(s, "learning_rate"), "1e-3");
  EXPECT_EQ(ValueOf(s, "max_steps"), "5000");
  EXPECT_EQ(s.Find("precision"), nullptr);  // an expression is not a value
}

TEST(Logs, TrainingArgumentsDump) {
  std::vector<std::string> lines = {
      "[INFO|trainer.py] {'loss': 2.1, 'learning_rate': 4.9e-05, 'epoch': 0.1}",
      "09/01/2021 13:30:16 - INFO - run -   Training/evaluation parameters TrainingArguments(",
      "    _n_gpu=1,",
      "    dataloader_num_workers=0,",
      "    fp16=True,",
      "    gradient_accumulation_steps=8,",
      "    gradient_checkpointing=False,",
      "    learning_rate=0.0001,",
      "    per_device_eval_batch_size=20,",
      "    per_device_train_batch_size=20,",
      "    seed=42,",
      ")",
      "seed=7,",
  };
  JobSettings s = SettingsFromLogLines(lines);
  EXPECT_EQ(ValueOf(s, "learning_rate"), "0.0001");  // not the metric record's 4.9e-05
  EXPECT_EQ(s.FindAll("learning_rate").size(), 1u);
  EXPECT_EQ(ValueOf(s, "num_workers"), "0");
  EXPECT_EQ(ValueOf(s, "precision"), "fp16");
  EXPECT_EQ(ValueOf(s, "batch_size"), "20");
  EXPECT_EQ(s.Find("batch_size")->raw_key, "per_device_train_batch_size");
  EXPECT_EQ(*s.Number("gradient_checkpointing"), 0);
  EXPECT_EQ(ValueOf(s, "seed"), "42");  // after ')' a bare line is no member
  EXPECT_EQ(s.FindAll("seed").size(), 1u);
  // A dump cut short ends at the first line that is no member.
  JobSettings cut = SettingsFromLogLines(
      {"TrainingArguments(", "seed=1,", "Namespace(lr=0.5)", "num_workers=3,"});
  EXPECT_EQ(ValueOf(cut, "learning_rate"), "0.5");
  EXPECT_EQ(cut.Find("num_workers"), nullptr);
}

TEST(Logs, NamespaceAndYolov5) {
  JobSettings s = SettingsFromLogLines(
      {"Namespace(batch_size=32, lr=0.001, epochs=10, milestones=[30, 60], name='a, b', workers=4)",
       "\x1b[34m\x1b[1mhyperparameters: \x1b[0mlr0=0.01, lrf=0.01, momentum=0.937, "
       "warmup_epochs=3.0"});
  EXPECT_EQ(ValueOf(s, "batch_size"), "32");
  EXPECT_EQ(ValueOf(s, "num_workers"), "4");  // after a list and a quoted comma
  EXPECT_EQ(s.FindAll("learning_rate").size(), 2u);
  EXPECT_EQ(ValueOf(s, "warmup_epochs"), "3.0");
}

TEST(Logs, BoundsHold) {
  JobSettingsLimits limits;
  limits.max_log_lines = 2;
  limits.max_settings = 1;
  JobSettings s = SettingsFromLogLines(
      {"Namespace(lr=1, seed=2)", "Namespace(batch_size=3)", "Namespace(epochs=4)"}, limits);
  EXPECT_EQ(s.all().size(), 1u);
  EXPECT_EQ(s.notes().size(), 2u);  // lines cut, settings full
  // A line over max_line_bytes is cut, not skipped, and nothing overruns.
  limits = {};
  limits.max_line_bytes = 20;
  JobSettings cut =
      SettingsFromLogLines({"Namespace(seed=5, lr=" + std::string(1000, '9') + ")"}, limits);
  EXPECT_EQ(ValueOf(cut, "seed"), "5");
}

TEST(Render, ProvenanceAndJson) {
  JobSettingsInput in;
  in.argv = {{"torchrun", "--nproc_per_node", "8", "train.py", "--num-workers", "2", "--bf16"}};
  in.configs = {{"/x/default.yaml", "workers: 8\n"}};
  in.env = {{"NCCL_DEBUG", "INFO"}};
  in.log_lines = {"Namespace(seed=3)"};
  JobSettings s = ParseJobSettings(in);
  EXPECT_EQ(SettingProvenance(*s.Find("num_workers")), "`--num-workers 2` on the command line");
  EXPECT_EQ(SettingProvenance(*s.FindAll("num_workers")[1]), "`workers=8` in /x/default.yaml");
  EXPECT_EQ(SettingProvenance(*s.Find("precision")), "`--bf16` on the command line");
  EXPECT_EQ(SettingProvenance(*s.Find("nproc_per_node")), "torchrun's `--nproc_per_node 8`");
  EXPECT_EQ(SettingProvenance(*s.Find("env.NCCL_DEBUG")), "`NCCL_DEBUG=INFO` in the environment");
  EXPECT_EQ(SettingProvenance(*s.Find("seed")), "`seed=3` in the job's log");
  JsonWriter w;
  WriteJobSettingsJson(s, &w);
  EXPECT_EQ(
      w.str(),
      R"({"settings":{"env.NCCL_DEBUG":[{"value":"INFO","source":"env","raw_key":"NCCL_DEBUG"}],)"
      R"("nproc_per_node":[{"value":"8","number":8,"source":"argv","raw_key":"--nproc_per_node",)"
      R"("launcher":"torchrun"}],"num_workers":[{"value":"2","number":2,"source":"argv",)"
      R"("raw_key":"--num-workers"},{"value":"8","number":8,"source":"config:/x/default.yaml",)"
      R"("raw_key":"workers"}],"precision":[{"value":"bf16","source":"argv","raw_key":"--bf16"}],)"
      R"("seed":[{"value":"3","number":3,"source":"log","raw_key":"seed"}]}})");
}

TEST(Aliases, EveryCanonicalKeyIsItsOwnAliasAndDocumented) {
  const char* src = std::getenv("VIGIL_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  std::ifstream in(std::string(src) + "/docs/job-settings.md");
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(doc.empty());
  for (std::string_view k : kCanonicalKeys) {
    JobSettings s = SettingsFromArgv({"train.py", "--" + std::string(k), "1"});
    EXPECT_NE(s.Find(k), nullptr) << k << " is not its own alias";
    EXPECT_NE(doc.find("| `" + std::string(k) + "` |"), std::string::npos)
        << k << " has no row in docs/job-settings.md's alias table";
  }
}

}  // namespace
}  // namespace vigil::parse::settings
