// TensorBoard event files (`events.out.tfevents.*`), read passively: the
// scalars a job logs with torch.utils.tensorboard, tf.summary, Keras'
// TensorBoard callback, Lightning's or Hugging Face's TensorBoard loggers.
//
// Format: TFRecord framing (uint64 length, masked CRC-32C of the length, the
// data, masked CRC-32C of the data; little-endian), each record one
// tensorflow.Event protobuf: wall_time (1), step (2), summary (5) with
// values: tag (1) and either simple_value (2, float) or a rank-0 tensor (8:
// float_val/double_val/int_val/int64_val or 4-byte/8-byte tensor_content).
// Histograms, images, audio, text and non-scalar tensors are skipped.
//
// The reader is incremental: feed it the file's bytes as they grow; a record
// not yet complete waits for more. A record whose CRC does not match is an
// error (the file is not an event file, or is damaged): the caller stops
// reading that file rather than guess where the next record starts.
//
// Thread safety: one reader per file; not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace vigil::parse::training {

struct TfScalar {
  uint64_t record = 0;  // 1-based number of its record in the file
  std::string tag;      // as logged: "train/loss", "eval/accuracy", ...
  double value = 0;
  int64_t step = 0;
  double wall_time = 0;  // seconds since the epoch, as the writer recorded it
};

// Whether a file's first bytes are a TFRecord header (its first length and
// that length's CRC agree): tells an event file from anything else.
bool LooksLikeTfRecord(std::string_view first_bytes);

class TfEventsReader {
 public:
  // Decodes every complete record in what was fed so far (`bytes` is the
  // next piece of the file) and appends its scalars. Corruption when a
  // record's CRC is wrong or an Event cannot be decoded; the reader then
  // refuses further input.
  Status Feed(std::string_view bytes, std::vector<TfScalar>* out);

  // Bytes of whole records consumed: where to resume reading after a restart.
  uint64_t consumed() const { return consumed_; }
  uint64_t records() const { return records_; }

 private:
  std::string pending_;  // the start of an incomplete record
  uint64_t consumed_ = 0;
  uint64_t records_ = 0;
  Status failed_;
};

// The masked CRC-32C TFRecord uses: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t MaskedCrc32c(std::string_view data);

}  // namespace vigil::parse::training
