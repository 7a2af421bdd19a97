#include "store/tsdb/series_index.h"

#include <re2/re2.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace vigil::tsdb {
namespace {

std::vector<uint64_t> Unite(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  std::vector<uint64_t> out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::vector<uint64_t> Subtract(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  std::vector<uint64_t> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// Compiled regexes by pattern. The alert engine runs the same selectors
// every second, and compiling them was a tenth of an evaluation. Bounded
// (emptied when full); RE2 matches from many threads at once, the map has
// its own lock.
Result<std::shared_ptr<const RE2>> CompileMatcher(const Matcher& m) {
  constexpr size_t kMaxCached = 256;
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_ptr<const RE2>> compiled;
  {
    std::lock_guard lock(mu);
    auto it = compiled.find(m.value);
    if (it != compiled.end()) return it->second;
  }
  RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_shared<const RE2>("^(?:" + m.value + ")$", opts);
  if (!re->ok()) {
    return InvalidArgument("invalid regex in matcher " + m.name + "=~\"" + m.value +
                           "\": " + re->error());
  }
  std::lock_guard lock(mu);
  if (compiled.size() >= kMaxCached) compiled.clear();
  compiled.emplace(m.value, re);
  return re;
}

// Whether a series whose label `m.name` has `value` ("" when absent) passes
// `m`; `re` is m's compiled regex for the regex kinds.
bool ValueMatches(const Matcher& m, const RE2* re, std::string_view value) {
  switch (m.type) {
    case MatchType::kEqual:
      return value == m.value;
    case MatchType::kNotEqual:
      return value != m.value;
    case MatchType::kRegex:
      return RE2::FullMatch(value, *re);
    case MatchType::kNotRegex:
      return !RE2::FullMatch(value, *re);
  }
  return false;
}

}  // namespace

uint64_t SeriesIndex::Hash(const wire::Labels& labels) {
  constexpr uint64_t kMul = 0x9e3779b97f4a7c15ULL;
  auto mix = [](uint64_t h, uint64_t w) {
    h = (h ^ w) * kMul;
    return h ^ (h >> 29);
  };
  // Sixteen bytes at a time in two independent lanes, which halves the chain
  // of dependent multiplies (label sets here run to hundreds of bytes); then
  // the length, which keeps "ab"+"c" and "a"+"bc" (name/value or label
  // boundaries) apart.
  auto add = [&mix](uint64_t h, std::string_view s) {
    uint64_t a = h;
    uint64_t b = h + kMul;
    size_t i = 0;
    for (; i + 16 <= s.size(); i += 16) {
      uint64_t w0, w1;
      std::memcpy(&w0, s.data() + i, 8);
      std::memcpy(&w1, s.data() + i + 8, 8);
      a = mix(a, w0);
      b = mix(b, w1);
    }
    if (i + 8 <= s.size()) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      a = mix(a, w);
      i += 8;
    }
    // The last 1..7 bytes with fixed-size loads: a variable-length copy costs
    // a call and a store-forwarding stall. Overlapping loads still read every
    // byte; collisions remain possible, which is why Find compares labels.
    size_t n = s.size();
    const char* p = s.data();
    if (i < n) {
      uint64_t w;
      if (n >= 8) {
        std::memcpy(&w, p + n - 8, 8);
      } else if (n >= 4) {
        uint32_t lo, hi;
        std::memcpy(&lo, p, 4);
        std::memcpy(&hi, p + n - 4, 4);
        w = lo | (uint64_t{hi} << 32);
      } else {
        w = static_cast<uint8_t>(p[0]) | (uint64_t{static_cast<uint8_t>(p[n / 2])} << 8) |
            (uint64_t{static_cast<uint8_t>(p[n - 1])} << 16);
      }
      b = mix(b, w);
    }
    return mix(mix(a, b), n);
  };
  uint64_t h = labels.size();
  for (const auto& l : labels) {
    h = add(h, l.name);
    h = add(h, l.value);
  }
  h ^= h >> 32;
  return h * kMul;
}

std::optional<uint64_t> SeriesIndex::Find(const wire::Labels& labels) const {
  auto [first, last] = by_hash_.equal_range(Hash(labels));
  for (auto it = first; it != last; ++it) {
    if (it->second->second == labels) return it->second->first;
  }
  return std::nullopt;
}

Status SeriesIndex::Add(uint64_t id, const wire::Labels& labels) {
  if (labels_.count(id) != 0)
    return Status(StatusCode::kAlreadyExists, "series id " + std::to_string(id));
  if (Find(labels)) {
    return Status(StatusCode::kAlreadyExists, "series " + wire::LabelsToString(labels));
  }
  auto stored = labels_.emplace(id, labels).first;
  by_hash_.emplace(Hash(labels), stored);
  for (const auto& l : labels) {
    Postings& p = postings_[l.name][l.value];
    // Ids normally arrive in increasing order; a catalog read out of order
    // still leaves the list sorted.
    p.insert(std::upper_bound(p.begin(), p.end(), id), id);
  }
  return Status::Ok();
}

const wire::Labels* SeriesIndex::LabelsOf(uint64_t id) const {
  auto it = labels_.find(id);
  return it == labels_.end() ? nullptr : &it->second;
}

SeriesIndex::Postings SeriesIndex::AllIds() const {
  Postings out;
  out.reserve(labels_.size());
  for (const auto& [id, labels] : labels_) out.push_back(id);
  return out;
}

template <typename Pred>
SeriesIndex::Postings SeriesIndex::Select(const std::string& name, bool empty_matches,
                                          Pred pred) const {
  Postings matched;
  Postings with_label;
  auto it = postings_.find(name);
  if (it != postings_.end()) {
    for (const auto& [value, ids] : it->second) {
      if (empty_matches) with_label.insert(with_label.end(), ids.begin(), ids.end());
      if (pred(value)) matched.insert(matched.end(), ids.begin(), ids.end());
    }
  }
  // A series has one value per name, so the lists are disjoint: sorting is enough.
  std::sort(matched.begin(), matched.end());
  if (!empty_matches) return matched;
  // A series without the label has the value "": it matches when "" does.
  std::sort(with_label.begin(), with_label.end());
  return Unite(matched, Subtract(AllIds(), with_label));
}

Result<SeriesIndex::Postings> SeriesIndex::MatchOne(const Matcher& m) const {
  switch (m.type) {
    case MatchType::kEqual:
    case MatchType::kNotEqual: {
      Postings eq;
      if (m.value.empty()) {
        eq = Select(m.name, true, [](const std::string&) { return false; });
      } else {
        auto it = postings_.find(m.name);
        if (it != postings_.end()) {
          auto v = it->second.find(m.value);
          if (v != it->second.end()) eq = v->second;
        }
      }
      if (m.type == MatchType::kEqual) return eq;
      return Subtract(AllIds(), eq);
    }
    case MatchType::kRegex:
    case MatchType::kNotRegex: {
      VIGIL_ASSIGN_OR_RETURN(std::shared_ptr<const RE2> re, CompileMatcher(m));
      bool empty = RE2::FullMatch("", *re);
      Postings rx =
          Select(m.name, empty, [&re](const std::string& v) { return RE2::FullMatch(v, *re); });
      if (m.type == MatchType::kRegex) return rx;
      return Subtract(AllIds(), rx);
    }
  }
  return InvalidArgument("unknown matcher type");
}

Result<std::vector<uint64_t>> SeriesIndex::Match(const std::vector<Matcher>& matchers) const {
  if (matchers.empty()) return AllIds();
  // Positive, selective matchers first keeps intermediate sets small.
  std::vector<const Matcher*> order;
  for (const auto& m : matchers) order.push_back(&m);
  std::stable_sort(order.begin(), order.end(), [](const Matcher* a, const Matcher* b) {
    auto rank = [](const Matcher* m) {
      return m->type == MatchType::kEqual && !m->value.empty() ? 0 : 1;
    };
    return rank(a) < rank(b);
  });
  VIGIL_ASSIGN_OR_RETURN(Postings result, MatchOne(*order[0]));
  // The other matchers check the candidates' own labels: a `fstype!~"..."`
  // after `__name__="node_filesystem_avail_bytes"` then costs the few
  // candidates, not a pass over every series of the index.
  for (size_t i = 1; i < order.size() && !result.empty(); ++i) {
    const Matcher& m = *order[i];
    std::shared_ptr<const RE2> re;
    if (m.type == MatchType::kRegex || m.type == MatchType::kNotRegex) {
      VIGIL_ASSIGN_OR_RETURN(re, CompileMatcher(m));
    }
    std::erase_if(result, [&](uint64_t id) {
      const wire::Labels* labels = LabelsOf(id);
      return labels == nullptr || !ValueMatches(m, re.get(), wire::LabelValue(*labels, m.name));
    });
  }
  return result;
}

}  // namespace vigil::tsdb
