// Log blocks (docs/logstore.md "Blocks"): the payload columns, the split of
// the text into skeleton and digits, and their zstd frames.
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "core/coding.h"
#include "store/logs/format.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace vigil::logstore {
namespace {

constexpr uint64_t kMaxBlockRawBytes = 256u << 20;

// zstd parameters of the two frames, on top of level 1 (measured on
// training-log blocks, bench/RESULTS.md "Logs"): level 1 is the fastest, and
// denser than levels 2..5. Digits compress best with the fast strategy, the
// longest minimum match (7) and a small hash table (2^10): chance matches
// of a few random digits cost more than the literals they replace, and the
// worthwhile ones (timestamps, counters, zeros) are recent; 10% smaller and
// faster than level 1's defaults. The skeletons gain 3% from the double-fast
// strategy at the same speed (hash tables of 2^10: as good on dpkg logs as
// larger ones, better on training logs). Stronger parameters (lazy matching:
// another 30% off the skeletons) cost ten times the CPU, so older blocks get
// them in the background (recompress.h).
struct FrameParams {
  ZSTD_strategy strategy;
  int min_match;
  int hash_log;
};
constexpr FrameParams kPayloadFrame{ZSTD_dfast, 7, 10};
constexpr FrameParams kDigitsFrame{ZSTD_fast, 7, 10};

struct CctxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

#if defined(__SSE2__)
// 0xff in each byte of x that is an ASCII digit, 0 elsewhere.
inline __m128i DigitBytes(__m128i x) {
  const __m128i d = _mm_sub_epi8(x, _mm_set1_epi8('0'));
  return _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d);
}
#endif

// SplitDigits on raw buffers: sk gets n bytes, dig up to n; returns the
// digits written.
size_t SplitDigitsInto(const uint8_t* p, size_t n, uint8_t* sk, uint8_t* dig) {
  size_t i = 0, j = 0;
#if defined(__SSE2__)
  const __m128i zero = _mm_set1_epi8('0');
  for (; i + 16 <= n; i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i is_digit = DigitBytes(x);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(sk + i),
                     _mm_or_si128(_mm_andnot_si128(is_digit, x), _mm_and_si128(is_digit, zero)));
    for (auto m = static_cast<uint32_t>(_mm_movemask_epi8(is_digit)); m != 0; m &= m - 1) {
      dig[j++] = p[i + std::countr_zero(m)];
    }
  }
#endif
  for (; i < n; ++i) {
    const uint8_t c = p[i];
    const bool digit = static_cast<uint8_t>(c - '0') < 10;
    sk[i] = digit ? '0' : c;
    dig[j] = c;
    j += digit;
  }
  return j;
}

// Number of '0' bytes in p[0, n): the digits a skeleton takes.
size_t CountZeros(const uint8_t* p, size_t n) {
  size_t i = 0, count = 0;
#if defined(__SSE2__)
  // Byte counters (a match is -1, so subtracting counts it), summed every
  // 255 rounds before they overflow: no popcount instruction in baseline
  // x86-64, and the library call cost a tenth of a query's time.
  const __m128i zero = _mm_set1_epi8('0');
  while (i + 16 <= n) {
    __m128i counts = _mm_setzero_si128();
    for (int round = 0; round < 255 && i + 16 <= n; ++round, i += 16) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      counts = _mm_sub_epi8(counts, _mm_cmpeq_epi8(x, zero));
    }
    const __m128i sums = _mm_sad_epu8(counts, _mm_setzero_si128());
    count += static_cast<size_t>(_mm_cvtsi128_si32(sums)) +
             static_cast<size_t>(_mm_extract_epi16(sums, 4));
  }
#endif
  for (; i < n; ++i) count += p[i] == '0';
  return count;
}

// Puts the digits back: out = sk with its k-th '0' replaced by dig[k]; returns
// the digits used. The caller has checked that dig holds CountZeros(sk, n).
size_t JoinDigits(const uint8_t* sk, size_t n, const uint8_t* dig, uint8_t* out) {
  size_t i = 0, j = 0;
#if defined(__SSE2__)
  const __m128i zero = _mm_set1_epi8('0');
  for (; i + 16 <= n; i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sk + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), x);
    for (auto m = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, zero))); m != 0;
         m &= m - 1) {
      out[i + std::countr_zero(m)] = dig[j++];
    }
  }
#endif
  for (; i < n; ++i) out[i] = sk[i] == '0' ? dig[j++] : sk[i];
  return j;
}

// Appends one zstd frame of src.
void AppendFrame(ZSTD_CCtx* cctx, const FrameParams& params, std::string_view src,
                 std::string* out) {
  ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_strategy, params.strategy);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_minMatch, params.min_match);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_hashLog, params.hash_log);
  const size_t head = out->size();
  out->resize(head + ZSTD_compressBound(src.size()));
  size_t n = ZSTD_compress2(cctx, out->data() + head, out->size() - head, src.data(), src.size());
  // Compression into the bound cannot fail; keep the format total anyway
  // (an empty frame then fails to decode: Corruption, never a crash).
  if (ZSTD_isError(n)) n = 0;
  out->resize(head + n);
}

Status DecompressFrame(const BlockFrame& frame, std::string* out) {
  // One context per thread: queries decode thousands of frames, and a fresh
  // context each time allocates and frees its ~100 KiB of tables.
  struct DctxFree {
    void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
  };
  thread_local std::unique_ptr<ZSTD_DCtx, DctxFree> dctx(ZSTD_createDCtx());
  if (!dctx) return ResourceExhausted("log block: cannot allocate a zstd context");
  out->resize(frame.raw_size);
  size_t n = ZSTD_decompressDCtx(dctx.get(), out->data(), out->size(), frame.data.data(),
                                 frame.data.size());
  if (ZSTD_isError(n) || n != frame.raw_size) return Corruption("log block: bad zstd data");
  return Status::Ok();
}

// The payload's first columns (times, meta, seqs); in points past them on
// return. Fills times, meta, seqs and sizes offsets.
Status DecodeColumns(std::string_view* in, DecodedBlock* out) {
  uint64_t count;
  if (!GetVarint64(in, &count) || count > in->size() / 4) return Corruption("log block: bad count");
  out->times.resize(count);
  out->seqs.resize(count);
  out->meta.resize(count);
  out->offsets.resize(count + 1);
  int64_t t = 0;
  for (uint64_t i = 0; i < count; ++i) {
    int64_t d;
    if (!GetVarsint64(in, &d)) return Corruption("log block: bad times");
    t = static_cast<int64_t>(static_cast<uint64_t>(t) + static_cast<uint64_t>(d));
    out->times[i] = t;
  }
  if (in->size() < count) return Corruption("log block: bad levels");
  for (uint64_t i = 0; i < count; ++i) {
    out->meta[i] = static_cast<uint8_t>((*in)[i]);
    if ((out->meta[i] & 0x0f) >= wire::kLogLevelCount) return Corruption("log block: bad level");
  }
  in->remove_prefix(count);
  uint64_t s = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t d;
    if (!GetVarint64(in, &d)) return Corruption("log block: bad seqs");
    s += d;
    out->seqs[i] = s;
  }
  return Status::Ok();
}

// Format 1: the lengths column, then the texts back to back, copied out.
Status DecodeSingleFrameText(std::string_view in, DecodedBlock* out) {
  uint64_t off = 0;
  out->offsets[0] = 0;
  for (size_t i = 0; i + 1 < out->offsets.size(); ++i) {
    uint64_t len;
    if (!GetVarint64(&in, &len) || len > in.size()) return Corruption("log block: bad lengths");
    off += len;
    out->offsets[i + 1] = static_cast<uint32_t>(off);
  }
  if (off != in.size()) return Corruption("log block: text size mismatch");
  out->text.assign(in.data(), in.size());
  return Status::Ok();
}

// Format 2: the lines that hold a '\n' (index delta, length), then every
// line's skeleton followed by '\n'; the digits go back in as the lines are
// copied out.
Status DecodeDigitsApartText(std::string_view in, std::string_view digits, DecodedBlock* out) {
  const size_t count = out->offsets.size() - 1;
  uint64_t multiline;
  if (!GetVarint64(&in, &multiline) || multiline > count) {
    return Corruption("log block: bad multiline count");
  }
  // (line index, length) of the lines that hold '\n', by index; the other
  // lines end at the next '\n'.
  std::vector<std::pair<uint64_t, uint64_t>> given(multiline);
  uint64_t index = 0;
  for (auto& [at, len] : given) {
    uint64_t delta;
    if (!GetVarint64(&in, &delta) || !GetVarint64(&in, &len) || delta > count - index ||
        len > in.size()) {
      return Corruption("log block: bad multiline lengths");
    }
    index += delta;
    at = index;
  }
  const auto* sk = reinterpret_cast<const uint8_t*>(in.data());
  if (CountZeros(sk, in.size()) != digits.size()) {
    return Corruption("log block: digits do not fit the text");
  }
  if (in.size() < count) return Corruption("log block: text size mismatch");
  out->text.resize(in.size() - count);
  auto* dst = reinterpret_cast<uint8_t*>(out->text.data());
  const auto* dig = reinterpret_cast<const uint8_t*>(digits.data());
  size_t pos = 0, off = 0, next_given = 0;
  out->offsets[0] = 0;
  for (size_t i = 0; i < count; ++i) {
    size_t len;
    if (next_given < given.size() && given[next_given].first == i) {
      len = given[next_given++].second;
    } else {
      const void* nl = std::memchr(sk + pos, '\n', in.size() - pos);
      len = nl ? static_cast<const uint8_t*>(nl) - (sk + pos) : in.size();
    }
    if (len >= in.size() - pos || sk[pos + len] != '\n' || off + len > out->text.size()) {
      return Corruption("log block: bad line ends");
    }
    dig += JoinDigits(sk + pos, len, dig, dst + off);
    pos += len + 1;
    off += len;
    out->offsets[i + 1] = static_cast<uint32_t>(off);
  }
  if (pos != in.size() || next_given != given.size()) {
    return Corruption("log block: text size mismatch");
  }
  return Status::Ok();
}

}  // namespace

void SplitDigits(std::string_view text, std::string* skeleton, std::string* digits) {
  const size_t sk0 = skeleton->size(), dig0 = digits->size();
  skeleton->resize(sk0 + text.size());
  digits->resize(dig0 + text.size());
  size_t n = SplitDigitsInto(reinterpret_cast<const uint8_t*>(text.data()), text.size(),
                             reinterpret_cast<uint8_t*>(skeleton->data() + sk0),
                             reinterpret_cast<uint8_t*>(digits->data() + dig0));
  digits->resize(dig0 + n);
}

namespace {

// A byte buffer that is not zeroed when it grows (the encoder writes every
// byte it hands out): a block's text is written once, not twice.
class ScratchBuffer {
 public:
  uint8_t* Reserve(size_t n) {
    if (n > capacity_) {
      data_.reset(new uint8_t[n]);
      capacity_ = n;
    }
    return data_.get();
  }
  // Buffers of one huge block are not kept for the next, small, ones.
  void Trim(size_t keep) {
    if (capacity_ > keep) {
      data_.reset();
      capacity_ = 0;
    }
  }

 private:
  std::unique_ptr<uint8_t[]> data_;
  size_t capacity_ = 0;
};

}  // namespace

struct BlockEncoder::Impl {
  std::unique_ptr<ZSTD_CCtx, CctxFree> cctx{ZSTD_createCCtx()};
  std::string columns;    // the payload up to the texts
  ScratchBuffer payload;  // columns, then the skeletons
  ScratchBuffer digits;
  std::unique_ptr<TrigramCollector> trigrams;  // made on the first filter
};

BlockEncoder::BlockEncoder() : impl_(std::make_unique<Impl>()) {}
BlockEncoder::~BlockEncoder() = default;

std::string BlockEncoder::Encode(const std::vector<BlockLine>& lines, BlockHeader* h,
                                 std::string* filter) {
  std::string& columns = impl_->columns;
  columns.clear();
  size_t text_bytes = 0;
  for (const auto& l : lines) text_bytes += l.text.size();
  PutVarint64(&columns, lines.size());
  h->level_counts.fill(0);
  h->min_time = INT64_MAX;
  h->max_time = INT64_MIN;
  h->min_seq = UINT64_MAX;
  h->max_seq = 0;
  int64_t prev_t = 0;
  for (const auto& l : lines) {
    PutVarsint64(&columns, static_cast<int64_t>(static_cast<uint64_t>(l.time_ns) -
                                                static_cast<uint64_t>(prev_t)));
    prev_t = l.time_ns;
    h->min_time = std::min(h->min_time, l.time_ns);
    h->max_time = std::max(h->max_time, l.time_ns);
    h->min_seq = std::min(h->min_seq, l.seq);
    h->max_seq = std::max(h->max_seq, l.seq);
    ++h->level_counts[std::min<int>(l.level, wire::kLogLevelCount - 1)];
  }
  for (const auto& l : lines) {
    columns.push_back(static_cast<char>((l.level & 0x0f) | (l.flags << 4)));
  }
  uint64_t prev_s = 0;
  for (const auto& l : lines) {
    PutVarint64(&columns, l.seq - prev_s);  // seqs grow within a stream
    prev_s = l.seq;
  }
  // Lines end with '\n' in the text, so their lengths need no column: only
  // multi-line records (a traceback joined into one line) say theirs.
  std::vector<std::pair<size_t, size_t>> multiline;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view t = lines[i].text;
    if (std::memchr(t.data(), '\n', t.size()) != nullptr) multiline.emplace_back(i, t.size());
  }
  PutVarint64(&columns, multiline.size());
  size_t prev_index = 0;
  for (const auto& [index, size] : multiline) {
    PutVarint64(&columns, index - prev_index);
    PutVarint64(&columns, size);
    prev_index = index;
  }
  h->raw_bytes = text_bytes;

  // The texts: skeletons into the payload, digits apart.
  const size_t payload_size = columns.size() + text_bytes + lines.size();
  uint8_t* const payload = impl_->payload.Reserve(payload_size);
  uint8_t* const dig = impl_->digits.Reserve(text_bytes);
  std::memcpy(payload, columns.data(), columns.size());
  uint8_t* sk = payload + columns.size();
  size_t digit_count = 0;
  if (filter && !impl_->trigrams) impl_->trigrams = std::make_unique<TrigramCollector>();
  for (const auto& l : lines) {
    const auto* p = reinterpret_cast<const uint8_t*>(l.text.data());
    digit_count += SplitDigitsInto(p, l.text.size(), sk, dig + digit_count);
    if (filter) {
      impl_->trigrams->Add(l.text,
                           std::string_view(reinterpret_cast<const char*>(sk), l.text.size()));
    }
    sk += l.text.size();
    *sk++ = '\n';
  }
  if (filter) *filter = impl_->trigrams->Build();

  std::string out;
  out.push_back(static_cast<char>(kBlockFormatDigitsApart));
  PutVarint64(&out, payload_size);
  PutVarint64(&out, digit_count);
  auto view = [](const uint8_t* p, size_t n) {
    return std::string_view(reinterpret_cast<const char*>(p), n);
  };
  AppendFrame(impl_->cctx.get(), kPayloadFrame, view(payload, payload_size), &out);
  if (digit_count > 0) AppendFrame(impl_->cctx.get(), kDigitsFrame, view(dig, digit_count), &out);
  constexpr size_t kKeepBytes = 4u << 20;
  impl_->payload.Trim(kKeepBytes);
  impl_->digits.Trim(kKeepBytes);
  if (columns.capacity() > kKeepBytes) std::string().swap(columns);
  return out;
}

std::string EncodeBlock(const std::vector<BlockLine>& lines, BlockHeader* header) {
  return BlockEncoder().Encode(lines, header);
}

Result<BlockParts> SplitBlock(std::string_view data) {
  BlockParts parts;
  if (data.empty()) return Corruption("log block: empty");
  parts.format = static_cast<uint8_t>(data.front());
  std::string_view rest = data.substr(1);
  uint64_t payload_size = 0, digits_size = 0;
  if (!GetVarint64(&rest, &payload_size) || payload_size > kMaxBlockRawBytes) {
    return Corruption("log block: bad size");
  }
  switch (parts.format) {
    case kBlockFormatSingleFrame:
      parts.header = data.substr(0, data.size() - rest.size());
      parts.frames.push_back({payload_size, rest});
      return parts;
    case kBlockFormatDigitsApart:
      // The digits come out of the payload's text: never more than it.
      if (!GetVarint64(&rest, &digits_size) || digits_size > payload_size) {
        return Corruption("log block: bad digits size");
      }
      break;
    default:
      return Corruption("log block: unknown version");
  }
  parts.header = data.substr(0, data.size() - rest.size());
  if (digits_size == 0) {
    parts.frames.push_back({payload_size, rest});
    return parts;
  }
  // The payload frame ends where zstd says; the digits' frame is the rest.
  const size_t first = ZSTD_findFrameCompressedSize(rest.data(), rest.size());
  if (ZSTD_isError(first) || first >= rest.size()) return Corruption("log block: bad frames");
  parts.frames.push_back({payload_size, rest.substr(0, first)});
  parts.frames.push_back({digits_size, rest.substr(first)});
  return parts;
}

Status DecodeBlock(std::string_view data, DecodedBlock* out) {
  VIGIL_ASSIGN_OR_RETURN(BlockParts parts, SplitBlock(data));
  std::string payload;
  VIGIL_RETURN_IF_ERROR(DecompressFrame(parts.frames[0], &payload));
  std::string_view in(payload);
  VIGIL_RETURN_IF_ERROR(DecodeColumns(&in, out));
  if (parts.format == kBlockFormatSingleFrame) return DecodeSingleFrameText(in, out);
  std::string digits;
  if (parts.frames.size() > 1) VIGIL_RETURN_IF_ERROR(DecompressFrame(parts.frames[1], &digits));
  return DecodeDigitsApartText(in, digits, out);
}

}  // namespace vigil::logstore
