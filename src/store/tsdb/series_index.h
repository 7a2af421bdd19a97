// SeriesIndex: label sets <-> series ids, and postings (name=value -> sorted
// ids) for evaluating PromQL label matchers without scanning every series.
//
// Ids are assigned by the caller (the Db) and only grow, so appending an id to
// a postings list keeps it sorted.
//
// Thread safety: none; the Db's head mutex guards its index.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "store/tsdb/db.h"
#include "wire/metric_batch.h"

namespace vigil::tsdb {

class SeriesIndex {
 public:
  // The id of a label set, if known.
  std::optional<uint64_t> Find(const wire::Labels& labels) const;
  // Adds a series. Fails if the id or the label set is already present.
  Status Add(uint64_t id, const wire::Labels& labels);
  const wire::Labels* LabelsOf(uint64_t id) const;
  size_t size() const { return labels_.size(); }

  // Ids of the series matching all matchers, sorted. An empty matcher list
  // matches every series. Fails on an invalid regex.
  Result<std::vector<uint64_t>> Match(const std::vector<Matcher>& matchers) const;

 private:
  using Postings = std::vector<uint64_t>;
  Result<Postings> MatchOne(const Matcher& m) const;
  // Ids whose value of `name` (the empty string if absent) satisfies `pred`.
  template <typename Pred>
  Postings Select(const std::string& name, bool empty_matches, Pred pred) const;
  Postings AllIds() const;

  // Hash(labels) -> the series with that hash, verified against their stored
  // labels: finding a series builds no key and allocates nothing, which
  // matters because it runs for every series of every appended batch.
  static uint64_t Hash(const wire::Labels& labels);
  std::unordered_multimap<uint64_t, std::map<uint64_t, wire::Labels>::const_iterator> by_hash_;
  std::map<uint64_t, wire::Labels> labels_;  // ordered: AllIds() comes out sorted
  // name -> value -> sorted ids
  std::unordered_map<std::string, std::map<std::string, Postings>> postings_;
};

}  // namespace vigil::tsdb
