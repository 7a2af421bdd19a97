#include "store/tsdb/series_index.h"

#include <re2/re2.h>

#include <algorithm>
#include <iterator>

#include "core/coding.h"

namespace vigil::tsdb {
namespace {

std::vector<uint64_t> Intersect(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  std::vector<uint64_t> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

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

}  // namespace

std::string SeriesIndex::Key(const wire::Labels& labels) {
  size_t n = 0;
  for (const auto& l : labels) n += l.name.size() + l.value.size() + 4;
  std::string key;
  key.reserve(n);
  for (const auto& l : labels) {
    PutLengthPrefixed(&key, l.name);
    PutLengthPrefixed(&key, l.value);
  }
  return key;
}

std::optional<uint64_t> SeriesIndex::Find(const wire::Labels& labels) const {
  auto it = by_key_.find(Key(labels));
  if (it == by_key_.end()) return std::nullopt;
  return it->second;
}

Status SeriesIndex::Add(uint64_t id, const wire::Labels& labels) {
  if (labels_.count(id) != 0)
    return Status(StatusCode::kAlreadyExists, "series id " + std::to_string(id));
  if (!by_key_.emplace(Key(labels), id).second) {
    return Status(StatusCode::kAlreadyExists, "series " + wire::LabelsToString(labels));
  }
  labels_.emplace(id, labels);
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
      RE2::Options opts;
      opts.set_log_errors(false);
      RE2 re("^(?:" + m.value + ")$", opts);
      if (!re.ok()) {
        return InvalidArgument("invalid regex in matcher " + m.name + "=~\"" + m.value +
                               "\": " + re.error());
      }
      bool empty = RE2::FullMatch("", re);
      Postings rx =
          Select(m.name, empty, [&re](const std::string& v) { return RE2::FullMatch(v, re); });
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
  Postings result;
  bool first = true;
  for (const Matcher* m : order) {
    VIGIL_ASSIGN_OR_RETURN(Postings ids, MatchOne(*m));
    result = first ? std::move(ids) : Intersect(result, ids);
    first = false;
    if (result.empty()) break;
  }
  return result;
}

}  // namespace vigil::tsdb
