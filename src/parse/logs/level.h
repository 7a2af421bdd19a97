// Level stage: the severity of a log line, from the formats training and
// inference jobs actually print. No regex: a small scanner over the first
// bytes of the line, so it costs tens of nanoseconds.
//
// Recognised (first match wins, see docs/log-parsing.md for examples):
//  * JSON objects: "level", "severity", "levelname", "lvl", "log.level" keys
//    (zap, logrus, structlog, python-json-logger, GCP style).
//  * glog/absl/klog: "E1129 10:00:00.123456 1234 file.cc:12] msg" (I W E F).
//  * logfmt: level=error, lvl=warn, severity=info.
//  * Upper-case level words as a whole token near the start: Python logging
//    ("... - WARNING - ...", "WARNING:root:msg"), log4j, zap console, Rust
//    tracing, HF transformers "[WARNING|trainer.py:123]", "NCCL WARN".
//  * Any-case level words in brackets: "[info]", "<error>", "(Warn)".
//  * "Error:"/"error:"/"warning:"/"fatal:" as the first word; "panic:";
//    Python "Traceback (most recent call last):" and "XxxError: msg" at the
//    start; "XxxWarning:" near the start; Java "Exception in thread".
// Keyword forms are looked for only in the first kLevelScanBytes, so an INFO
// line that says "no errors found" later on stays INFO, and a line with no
// marker is kUnknown. For a multi-line record only its first line counts.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string_view>

#include "wire/log_batch.h"

namespace vigil::parse::logs {

inline constexpr size_t kLevelScanBytes = 128;

wire::LogLevel DetectLevel(std::string_view line);

// A level name in any case: trace, debug, dbg, info, inf, notice, warn,
// warning, wrn, error, err, severe, fatal, critical, crit, panic, emerg,
// alert, fine(r/st) (java.util.logging); false otherwise.
bool LevelFromWord(std::string_view word, wire::LogLevel* level);

// Length of the worker prefix torchrun and DeepSpeed's launcher put before
// each line ("[rank0]: ", "[default3]:", with at most one space), or Ray's
// before its workers' lines ("(RayTrainWorker pid=1234, ip=10.0.0.5) ",
// "(pid=600) ", with one space: the line's own indentation stays); 0 if none.
size_t WorkerPrefixLen(std::string_view s);

}  // namespace vigil::parse::logs
