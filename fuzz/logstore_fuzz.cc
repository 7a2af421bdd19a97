// Fuzz target: the log store's on-disk decoders (WAL records, blocks and
// token filters are read back from files that a crash or a disk may have
// damaged), and two properties of what decodes: a block encodes back to the
// same lines, and its lines' filter never rules out a substring of a line.
//
// Seeds (corpus/logstore_fuzz): block_0/1 are format-1 blocks, block_2/3
// format 2 (digits apart; block_3 holds multi-line records), written by
// EncodeBlock; wal_record_* are WAL record bodies.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "store/logs/format.h"

namespace {

using namespace vigil::logstore;  // NOLINT: a fuzz target

void CheckBlock(const DecodedBlock& block) {
  // A decoded block's offsets must stay inside its text.
  for (size_t i = 0; i < block.size(); ++i) {
    if (block.offsets[i] > block.offsets[i + 1] || block.offsets[i + 1] > block.text.size()) {
      std::abort();
    }
  }
  std::vector<BlockLine> lines;
  for (size_t i = 0; i < block.size(); ++i) {
    lines.push_back({block.times[i], block.seqs[i], static_cast<uint8_t>(block.meta[i] & 0x0f),
                     static_cast<uint8_t>(block.meta[i] >> 4), block.line(i)});
  }
  // Whatever decodes encodes back to the same lines.
  BlockHeader header;
  static BlockEncoder encoder;  // its filter tables take megabytes to set up
  std::string filter;
  const std::string again = encoder.Encode(lines, &header, &filter);
  DecodedBlock round;
  if (!DecodeBlock(again, &round).ok() || round.size() != block.size()) std::abort();
  for (size_t i = 0; i < block.size(); ++i) {
    if (round.line(i) != block.line(i) || round.times[i] != block.times[i] ||
        round.seqs[i] != block.seqs[i] || round.meta[i] != block.meta[i]) {
      std::abort();
    }
  }
  // The filter never says "absent" for a piece of a line: a few pieces of
  // each (head, middle, tail), in any case.
  for (size_t i = 0; i < block.size() && i < 64; ++i) {
    const std::string_view l = block.line(i);
    for (size_t at : {size_t{0}, l.size() / 3, l.size() > 12 ? l.size() - 12 : 0}) {
      const std::string_view piece = l.substr(at, 12);
      if (!FilterMayContain(filter, PatternFilterKeys(piece))) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  WalRecord rec;
  (void)DecodeWalRecord(in, &rec);
  DecodedBlock block;
  if (DecodeBlock(in, &block).ok()) CheckBlock(block);
  // The input as the lines of a block (split at 0x1e, so lines may hold
  // '\n'): its encoding must decode to them, and its filter pass them.
  std::vector<std::string> texts;
  for (size_t start = 0; start <= in.size() && texts.size() < 256;) {
    size_t end = in.find('\x1e', start);
    if (end == std::string_view::npos) end = in.size();
    texts.emplace_back(in.substr(start, end - start));
    start = end + 1;
  }
  std::vector<BlockLine> lines;
  for (size_t i = 0; i < texts.size(); ++i) {
    lines.push_back({static_cast<int64_t>(i), i, static_cast<uint8_t>(i % 7), 0, texts[i]});
  }
  BlockHeader header;
  DecodedBlock mine;
  if (!DecodeBlock(EncodeBlock(lines, &header), &mine).ok() || mine.size() != texts.size()) {
    std::abort();
  }
  CheckBlock(mine);
  // Any bytes as a filter, asked for pieces of themselves: never a crash.
  (void)FilterMayContain(in, PatternFilterKeys(in.substr(0, 16)));
  (void)FilterMayContain(in, PatternFilterKeys(in.substr(in.size() / 2, 9)));
  return 0;
}
