#include "parse/training/tfevents.h"

#include <cmath>
#include <cstring>

#include "core/coding.h"
#include "core/protobuf.h"

namespace vigil::parse::training {
namespace {

// A record bigger than this is not a scalar summary (TensorBoard's own
// reader has no limit; graphs can be large): it is skipped whole, and a
// length beyond any file is taken as corruption.
constexpr uint64_t kMaxRecordBytes = 256u << 20;
constexpr size_t kHeaderBytes = 12;  // length + its CRC
constexpr size_t kFooterBytes = 4;   // the data's CRC

// tensorflow.DataType values a scalar may have.
enum DataType : uint64_t { kFloat = 1, kDouble = 2, kInt32 = 3, kInt64 = 9 };

uint32_t Fixed32At(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // little-endian hosts only, as the rest of Vigil's formats
}

// The value of a rank-0 TensorProto, if it is a number.
bool TensorScalar(std::string_view tensor, double* value, std::string* error) {
  PbReader r(tensor, error);
  uint64_t dtype = 0;
  bool has_value = false, ranked = false;
  std::string_view content;
  while (!r.empty()) {
    uint32_t field, wt;
    if (!r.Key(&field, &wt)) return false;
    std::string_view bytes;
    if (field == 1 && wt == kPbVarint) {
      if (!r.Varint(&dtype)) return false;
    } else if (field == 2 && wt == kPbLen) {  // tensor_shape: any dim makes it non-scalar
      if (!r.Bytes(&bytes)) return false;
      PbReader shape(bytes, error);
      while (!shape.empty()) {
        uint32_t f, w;
        if (!shape.Key(&f, &w)) return false;
        if (f == 2) ranked = true;  // a Dim
        if (!shape.Skip(w)) return false;
      }
    } else if (field == 4 && wt == kPbLen) {
      if (!r.Bytes(&content)) return false;
    } else if ((field == 5 || field == 6 || field == 7 || field == 10) && wt == kPbLen) {
      // Packed repeated values: the first is the scalar.
      if (!r.Bytes(&bytes)) return false;
      PbReader packed(bytes, error);
      if (packed.empty()) continue;
      if (field == 5) {
        float f;
        if (!packed.Float(&f)) return false;
        *value = f;
      } else if (field == 6) {
        if (!packed.Double(value)) return false;
      } else {
        uint64_t v;
        if (!packed.Varint(&v)) return false;
        *value = field == 7 ? static_cast<double>(static_cast<int32_t>(v))
                            : static_cast<double>(static_cast<int64_t>(v));
      }
      has_value = true;
    } else if (field == 5 && wt == kPbFixed32) {  // unpacked float_val
      float f;
      if (!r.Float(&f)) return false;
      *value = f;
      has_value = true;
    } else if (field == 6 && wt == kPbFixed64) {
      if (!r.Double(value)) return false;
      has_value = true;
    } else if (!r.Skip(wt)) {
      return false;
    }
  }
  if (ranked) return false;
  if (has_value) return true;
  // Writers that fill tensor_content (torch, TF2) give the raw bytes.
  if (dtype == kFloat && content.size() == 4) {
    float f;
    std::memcpy(&f, content.data(), 4);
    *value = f;
    return true;
  }
  if (dtype == kDouble && content.size() == 8) {
    std::memcpy(value, content.data(), 8);
    return true;
  }
  if (dtype == kInt32 && content.size() == 4) {
    *value = static_cast<int32_t>(Fixed32At(content.data()));
    return true;
  }
  if (dtype == kInt64 && content.size() == 8) {
    int64_t v;
    std::memcpy(&v, content.data(), 8);
    *value = static_cast<double>(v);
    return true;
  }
  return false;
}

// One Summary.Value: appends a scalar when it is one.
bool SummaryValue(std::string_view value, uint64_t record, int64_t step, double wall_time,
                  std::vector<TfScalar>* out, std::string* error) {
  PbReader r(value, error);
  TfScalar s;
  s.record = record;
  s.step = step;
  s.wall_time = wall_time;
  bool found = false;
  while (!r.empty()) {
    uint32_t field, wt;
    if (!r.Key(&field, &wt)) return false;
    std::string_view bytes;
    if (field == 1 && wt == kPbLen) {
      if (!r.Bytes(&bytes)) return false;
      s.tag.assign(bytes.substr(0, 256));
    } else if (field == 2 && wt == kPbFixed32) {
      float f;
      if (!r.Float(&f)) return false;
      s.value = f;
      found = true;
    } else if (field == 8 && wt == kPbLen) {
      if (!r.Bytes(&bytes)) return false;
      found = TensorScalar(bytes, &s.value, error) || found;
      if (!error->empty()) return false;
    } else if (!r.Skip(wt)) {
      return false;
    }
  }
  if (found && !s.tag.empty()) out->push_back(std::move(s));
  return true;
}

bool DecodeEvent(std::string_view event, uint64_t record, std::vector<TfScalar>* out,
                 std::string* error) {
  PbReader r(event, error);
  double wall_time = 0;
  int64_t step = 0;
  std::string_view summary;
  while (!r.empty()) {
    uint32_t field, wt;
    if (!r.Key(&field, &wt)) return false;
    uint64_t v;
    if (field == 1 && wt == kPbFixed64) {
      if (!r.Double(&wall_time)) return false;
    } else if (field == 2 && wt == kPbVarint) {
      if (!r.Varint(&v)) return false;
      step = static_cast<int64_t>(v);
    } else if (field == 5 && wt == kPbLen) {
      if (!r.Bytes(&summary)) return false;
    } else if (!r.Skip(wt)) {
      return false;
    }
  }
  PbReader values(summary, error);
  while (!values.empty()) {
    uint32_t field, wt;
    if (!values.Key(&field, &wt)) return false;
    std::string_view value;
    if (field == 1 && wt == kPbLen) {
      if (!values.Bytes(&value) || !SummaryValue(value, record, step, wall_time, out, error))
        return false;
    } else if (!values.Skip(wt)) {
      return false;
    }
  }
  return true;
}

}  // namespace

uint32_t MaskedCrc32c(std::string_view data) {
  uint32_t crc = Crc32c(data);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

bool LooksLikeTfRecord(std::string_view first) {
  if (first.size() < kHeaderBytes) return false;
  uint64_t length = DecodeFixed64(first.data());
  return length <= kMaxRecordBytes &&
         Fixed32At(first.data() + 8) == MaskedCrc32c(first.substr(0, 8));
}

Status TfEventsReader::Feed(std::string_view bytes, std::vector<TfScalar>* out) {
  if (!failed_.ok()) return failed_;
  pending_.append(bytes);
  std::string_view in = pending_;
  size_t used = 0;
  while (in.size() - used >= kHeaderBytes) {
    const char* p = in.data() + used;
    uint64_t length = DecodeFixed64(p);
    if (Fixed32At(p + 8) != MaskedCrc32c(std::string_view(p, 8)) || length > kMaxRecordBytes) {
      failed_ =
          Corruption("tfevents: bad record header at byte " + std::to_string(consumed_ + used));
      break;
    }
    if (in.size() - used < kHeaderBytes + length + kFooterBytes) break;  // wait for the rest
    std::string_view data(p + kHeaderBytes, length);
    if (Fixed32At(p + kHeaderBytes + length) != MaskedCrc32c(data)) {
      failed_ = Corruption("tfevents: bad record CRC at byte " + std::to_string(consumed_ + used));
      break;
    }
    std::string error;
    if (!DecodeEvent(data, records_ + 1, out, &error)) {
      failed_ = Corruption("tfevents: bad Event at byte " + std::to_string(consumed_ + used) +
                           ": " + error);
      break;
    }
    used += kHeaderBytes + length + kFooterBytes;
    ++records_;
  }
  consumed_ += used;
  pending_.erase(0, used);
  return failed_;
}

}  // namespace vigil::parse::training
