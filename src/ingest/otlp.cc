#include "ingest/otlp.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/crypto.h"
#include "core/json_writer.h"
#include "core/protobuf.h"

namespace vigil::ingest::otlp {
namespace {

// Bytes of labels of the series one request may create (a bound on memory:
// a request's series can repeat long resource labels on many points).
constexpr size_t kMaxBatchLabelBytes = 64 * 1024 * 1024;
// Distinct reasons kept for the response's errorMessage.
constexpr size_t kMaxReasons = 4;

// ---------------------------------------------------------------------------
// The decoded model both encodings produce.

// An AnyValue rendered as a label value; `json` is its rendering inside a
// JSON array or map (strings quoted).
struct Value {
  std::string text;
  std::string json = "null";
};

struct Attr {
  std::string key;
  std::string value;
};

struct Point {
  std::vector<Attr> attrs;
  uint64_t time_ns = 0;
  double value = 0;
  bool has_value = false;
  uint64_t flags = 0;
};

enum class Kind { kNone, kGauge, kSum, kHistogram, kExponentialHistogram, kSummary };

struct Metric {
  std::string name;
  std::string description;
  Kind kind = Kind::kNone;
  int64_t temporality = 0;  // 1 delta, 2 cumulative
  bool monotonic = false;
  std::vector<Point> points;
  uint64_t other_points = 0;  // points of the kinds not stored
};

struct Resource {
  std::string job;
  std::string instance;
};

constexpr uint64_t kFlagNoRecordedValue = 1;

std::string FormatDouble(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general);
  return std::string(buf, r.ptr);
}

std::string Quoted(std::string_view s) {
  std::string out;
  AppendJsonString(&out, s);
  return out;
}

Value StringValue(std::string s) {
  Value v;
  v.json = Quoted(s);
  v.text = std::move(s);
  return v;
}
Value PlainValue(std::string s) {
  Value v;
  v.json = s;
  v.text = std::move(s);
  return v;
}
Value DoubleValue(double d) {
  std::string s = FormatDouble(d);
  return std::isfinite(d) ? PlainValue(std::move(s)) : StringValue(std::move(s));
}
// Arrays and maps render as JSON, both as the label value and nested.
Value JsonValue(std::string json) { return PlainValue(std::move(json)); }

void NoteResourceAttr(const Attr& a, Resource* r) {
  if (a.key == "service.name") r->job = a.value;
  if (a.key == "service.instance.id") r->instance = a.value;
}

// ---------------------------------------------------------------------------
// Series building, shared by both encodings.

class Converter {
 public:
  explicit Converter(const DecodeOptions& options) : options_(options) {
    result_.batch.source = options.node;
  }

  void Add(const Resource& resource, Metric&& m) {
    switch (m.kind) {
      case Kind::kNone:
        return;
      case Kind::kHistogram:
      case Kind::kExponentialHistogram:
      case Kind::kSummary:
        Reject(m.other_points,
               "histogram, exponential histogram and summary metrics are not stored yet "
               "(metric '" +
                   m.name + "')");
        return;
      case Kind::kSum:
        if (m.temporality == 1) {
          Reject(
              m.points.size(),
              "delta sums are not stored: export cumulative temporality (metric '" + m.name + "')");
          return;
        }
        if (m.temporality != 2) {
          Reject(m.points.size(),
                 "sum without an aggregation temporality (metric '" + m.name + "')");
          return;
        }
        break;
      case Kind::kGauge:
        break;
    }
    if (m.name.empty()) {
      Reject(m.points.size(), "metric without a name");
      return;
    }
    bool counter = m.kind == Kind::kSum && m.monotonic;
    std::string name = SanitizeMetricName(m.name);
    if (counter && !name.ends_with("_total")) name += "_total";
    if (families_.insert(name).second) {
      result_.batch.families.push_back(
          {name, counter ? wire::MetricType::kCounter : wire::MetricType::kGauge, m.description});
    }
    for (Point& p : m.points) AddPoint(resource, name, std::move(p));
  }

  DecodeResult Finish() {
    for (auto& s : result_.batch.series) {
      std::stable_sort(
          s.samples.begin(), s.samples.end(),
          [](const wire::Sample& a, const wire::Sample& b) { return a.t_ms < b.t_ms; });
    }
    for (size_t i = 0; i < reasons_.size(); ++i) {
      if (i > 0) result_.rejected_reason += "; ";
      result_.rejected_reason += reasons_[i];
    }
    return std::move(result_);
  }

 private:
  void Reject(uint64_t n, const std::string& why) {
    if (n == 0) return;
    result_.rejected_points += n;
    if (reasons_.size() < kMaxReasons &&
        std::find(reasons_.begin(), reasons_.end(), why) == reasons_.end()) {
      reasons_.push_back(why);
    }
  }

  void AddPoint(const Resource& resource, const std::string& name, Point&& p) {
    if (p.flags & kFlagNoRecordedValue) return;  // a staleness marker: nothing to store
    if (!p.has_value) {
      Reject(1, "data point without a value (metric '" + name + "')");
      return;
    }
    // Attributes whose names sanitise alike are joined with ';' in key order.
    std::stable_sort(p.attrs.begin(), p.attrs.end(),
                     [](const Attr& a, const Attr& b) { return a.key < b.key; });
    std::map<std::string, std::string> by_name;
    for (Attr& a : p.attrs) {
      if (a.key.empty() || a.value.empty()) continue;  // no label name, or Prometheus' "absent"
      std::string n = SanitizeLabelName(a.key);
      if (n == "node" || (n == "job" && !resource.job.empty()) ||
          (n == "instance" && !resource.instance.empty())) {
        n = "exported_" + n;
      }
      auto [it, fresh] = by_name.try_emplace(std::move(n), std::move(a.value));
      if (!fresh) (it->second += ';') += a.value;
    }
    wire::Labels labels;
    labels.reserve(by_name.size() + 4);
    for (auto& [n, v] : by_name) labels.push_back({n, std::move(v)});
    labels.push_back({std::string(wire::kMetricNameLabel), name});
    labels.push_back({"node", options_.node});
    labels.push_back({"job", resource.job});
    labels.push_back({"instance", resource.instance});
    wire::NormalizeLabels(&labels);
    if (labels.size() > wire::kMaxLabelsPerSeries) {
      Reject(1, "data point with more than " + std::to_string(wire::kMaxLabelsPerSeries) +
                    " labels (metric '" + name + "')");
      return;
    }
    size_t bytes = 0;
    for (const auto& l : labels) {
      if (l.name.size() + l.value.size() > wire::kMaxLabelBytes) {
        Reject(1, "data point with a label over " + std::to_string(wire::kMaxLabelBytes) +
                      " bytes (metric '" + name + "')");
        return;
      }
      bytes += l.name.size() + l.value.size();
    }
    wire::Sample sample;
    sample.t_ms = p.time_ns == 0 ? options_.now_ms : static_cast<int64_t>(p.time_ns / 1'000'000);
    sample.value = p.value;
    std::string key = wire::LabelsToString(labels);
    auto it = index_.find(key);
    if (it == index_.end()) {
      if (label_bytes_ + bytes > kMaxBatchLabelBytes) {
        Reject(1, "request creates too many series; send fewer per request");
        return;
      }
      label_bytes_ += bytes;
      it = index_.emplace(std::move(key), result_.batch.series.size()).first;
      result_.batch.series.push_back({std::move(labels), {}});
    }
    result_.batch.series[it->second].samples.push_back(sample);
    ++result_.accepted_points;
  }

  DecodeOptions options_;
  DecodeResult result_;
  std::unordered_map<std::string, size_t> index_;
  std::unordered_set<std::string> families_;
  std::vector<std::string> reasons_;
  size_t label_bytes_ = 0;
};

// ---------------------------------------------------------------------------
// Protobuf wire format.

constexpr uint32_t kVarint = kPbVarint;
constexpr uint32_t kFixed64 = kPbFixed64;
constexpr uint32_t kLen = kPbLen;
constexpr uint32_t kFixed32 = kPbFixed32;

class PbDecoder {
 public:
  PbDecoder(Converter* out, std::string* error) : out_(out), error_(error) {}

  bool Request(std::string_view in) {
    return Fields(in, "ExportMetricsServiceRequest", [&](uint32_t f, uint32_t wt, PbReader* r) {
      if (f != 1) return Skip(r, wt);
      std::string_view sub;
      return Want(wt, kLen, "resource_metrics") && r->Bytes(&sub) && ResourceMetrics(sub);
    });
  }

 private:
  // Calls fn(field, wire type, reader) for each field of a message; fn reads
  // or skips the value.
  template <typename Fn>
  bool Fields(std::string_view in, const char* what, Fn fn) {
    PbReader r(in, error_);
    while (!r.empty()) {
      uint32_t f, wt;
      if (!r.Key(&f, &wt) || !KnownWireType(&r, wt) || !fn(f, wt, &r)) {
        if (context_.empty()) context_ = what;
        return false;
      }
    }
    return true;
  }
  static bool KnownWireType(PbReader* r, uint32_t wt) {
    if (wt == kVarint || wt == kFixed64 || wt == kLen || wt == kFixed32) return true;
    return r->Fail("unsupported wire type " + std::to_string(wt) +
                   (wt == 3 || wt == 4 ? " (groups are not used by OTLP)" : ""));
  }
  bool Skip(PbReader* r, uint32_t wt) { return r->Skip(wt); }
  bool Want(uint32_t wt, uint32_t want, const char* field) {
    if (wt == want) return true;
    if (error_->empty()) {
      *error_ = std::string("field ") + field + " has wire type " + PbWireTypeName(wt) +
                ", expected " + PbWireTypeName(want);
    }
    return false;
  }

  bool ResourceMetrics(std::string_view in) {
    Resource resource;
    std::vector<std::string_view> scopes;
    bool ok = Fields(in, "ResourceMetrics", [&](uint32_t f, uint32_t wt, PbReader* r) {
      std::string_view sub;
      if (f == 1) {
        return Want(wt, kLen, "resource") && r->Bytes(&sub) && ResourceMsg(sub, &resource);
      }
      if (f == 2) {
        if (!Want(wt, kLen, "scope_metrics") || !r->Bytes(&sub)) return false;
        scopes.push_back(sub);
        return true;
      }
      return Skip(r, wt);
    });
    if (!ok) return false;
    for (std::string_view s : scopes) {
      if (!ScopeMetrics(s, resource)) return false;
    }
    return true;
  }

  bool ResourceMsg(std::string_view in, Resource* resource) {
    return Fields(in, "Resource", [&](uint32_t f, uint32_t wt, PbReader* r) {
      if (f != 1) return Skip(r, wt);
      std::string_view sub;
      Attr a;
      if (!Want(wt, kLen, "attributes") || !r->Bytes(&sub) || !KeyValue(sub, 0, &a)) return false;
      NoteResourceAttr(a, resource);
      return true;
    });
  }

  bool ScopeMetrics(std::string_view in, const Resource& resource) {
    return Fields(in, "ScopeMetrics", [&](uint32_t f, uint32_t wt, PbReader* r) {
      if (f != 2) return Skip(r, wt);
      std::string_view sub;
      return Want(wt, kLen, "metrics") && r->Bytes(&sub) && MetricMsg(sub, resource);
    });
  }

  bool MetricMsg(std::string_view in, const Resource& resource) {
    Metric m;
    std::string_view data;
    bool ok = Fields(in, "Metric", [&](uint32_t f, uint32_t wt, PbReader* r) {
      std::string_view sub;
      switch (f) {
        case 1:
        case 2:
          if (!Want(wt, kLen, f == 1 ? "name" : "description") || !r->Bytes(&sub)) return false;
          (f == 1 ? m.name : m.description) = std::string(sub);
          return true;
        case 5:
        case 7:
        case 9:
        case 10:
        case 11:
          if (!Want(wt, kLen, "data") || !r->Bytes(&data)) return false;
          m.kind = f == 5    ? Kind::kGauge
                   : f == 7  ? Kind::kSum
                   : f == 9  ? Kind::kHistogram
                   : f == 10 ? Kind::kExponentialHistogram
                             : Kind::kSummary;
          return true;
        default:
          return Skip(r, wt);
      }
    });
    if (!ok) return false;
    if (m.kind == Kind::kGauge || m.kind == Kind::kSum) {
      ok = Fields(data, m.kind == Kind::kGauge ? "Gauge" : "Sum",
                  [&](uint32_t f, uint32_t wt, PbReader* r) {
                    std::string_view sub;
                    uint64_t v;
                    if (f == 1) {
                      m.points.emplace_back();
                      return Want(wt, kLen, "data_points") && r->Bytes(&sub) &&
                             NumberDataPoint(sub, &m.points.back());
                    }
                    if (m.kind == Kind::kSum && (f == 2 || f == 3)) {
                      if (!Want(wt, kVarint, f == 2 ? "aggregation_temporality" : "is_monotonic") ||
                          !r->Varint(&v)) {
                        return false;
                      }
                      if (f == 2) m.temporality = static_cast<int64_t>(v);
                      if (f == 3) m.monotonic = v != 0;
                      return true;
                    }
                    return Skip(r, wt);
                  });
    } else if (m.kind != Kind::kNone) {
      // Not stored: only their data points are counted.
      ok = Fields(data, "Histogram", [&](uint32_t f, uint32_t wt, PbReader* r) {
        if (f != 1) return Skip(r, wt);
        std::string_view sub;
        ++m.other_points;
        return Want(wt, kLen, "data_points") && r->Bytes(&sub);
      });
    }
    if (!ok) return false;
    out_->Add(resource, std::move(m));
    return true;
  }

  bool NumberDataPoint(std::string_view in, Point* p) {
    return Fields(in, "NumberDataPoint", [&](uint32_t f, uint32_t wt, PbReader* r) {
      std::string_view sub;
      uint64_t v;
      switch (f) {
        case 7: {
          Attr a;
          if (!Want(wt, kLen, "attributes") || !r->Bytes(&sub) || !KeyValue(sub, 0, &a)) {
            return false;
          }
          p->attrs.push_back(std::move(a));
          return true;
        }
        case 2:
          return Want(wt, kFixed64, "start_time_unix_nano") && r->Fixed64(&v);
        case 3:
          return Want(wt, kFixed64, "time_unix_nano") && r->Fixed64(&p->time_ns);
        case 4:
          if (!Want(wt, kFixed64, "as_double") || !r->Fixed64(&v)) return false;
          std::memcpy(&p->value, &v, sizeof(v));
          p->has_value = true;
          return true;
        case 6:
          if (!Want(wt, kFixed64, "as_int") || !r->Fixed64(&v)) return false;
          p->value = static_cast<double>(static_cast<int64_t>(v));
          p->has_value = true;
          return true;
        case 8:
          return Want(wt, kVarint, "flags") && r->Varint(&p->flags);
        default:
          return Skip(r, wt);
      }
    });
  }

  bool KeyValue(std::string_view in, int depth, Attr* out, Value* json_value = nullptr) {
    Value value;
    bool ok = Fields(in, "KeyValue", [&](uint32_t f, uint32_t wt, PbReader* r) {
      std::string_view sub;
      if (f == 1) {
        if (!Want(wt, kLen, "key") || !r->Bytes(&sub)) return false;
        out->key = std::string(sub);
        return true;
      }
      if (f == 2)
        return Want(wt, kLen, "value") && r->Bytes(&sub) && AnyValue(sub, depth + 1, &value);
      return Skip(r, wt);
    });
    if (!ok) return false;
    if (json_value != nullptr) *json_value = value;
    out->value = std::move(value.text);
    return true;
  }

  bool AnyValue(std::string_view in, int depth, Value* out) {
    if (depth > kMaxAnyValueDepth) {
      if (error_->empty()) {
        *error_ = "attribute values nested deeper than " + std::to_string(kMaxAnyValueDepth);
      }
      return false;
    }
    return Fields(in, "AnyValue", [&](uint32_t f, uint32_t wt, PbReader* r) {
      std::string_view sub;
      uint64_t v;
      switch (f) {
        case 1:
        case 7:
          if (!Want(wt, kLen, f == 1 ? "string_value" : "bytes_value") || !r->Bytes(&sub)) {
            return false;
          }
          *out = StringValue(f == 1 ? std::string(sub) : Base64Encode(sub));
          return true;
        case 2:
          if (!Want(wt, kVarint, "bool_value") || !r->Varint(&v)) return false;
          *out = PlainValue(v != 0 ? "true" : "false");
          return true;
        case 3:
          if (!Want(wt, kVarint, "int_value") || !r->Varint(&v)) return false;
          *out = PlainValue(std::to_string(static_cast<int64_t>(v)));
          return true;
        case 4: {
          if (!Want(wt, kFixed64, "double_value") || !r->Fixed64(&v)) return false;
          double d;
          std::memcpy(&d, &v, sizeof(d));
          *out = DoubleValue(d);
          return true;
        }
        case 5:
        case 6:
          if (!Want(wt, kLen, f == 5 ? "array_value" : "kvlist_value") || !r->Bytes(&sub)) {
            return false;
          }
          return f == 5 ? ArrayValue(sub, depth, out) : KvList(sub, depth, out);
        default:
          return Skip(r, wt);
      }
    });
  }

  bool ArrayValue(std::string_view in, int depth, Value* out) {
    std::string json = "[";
    bool ok = Fields(in, "ArrayValue", [&](uint32_t f, uint32_t wt, PbReader* r) {
      if (f != 1) return Skip(r, wt);
      std::string_view sub;
      Value v;
      if (!Want(wt, kLen, "values") || !r->Bytes(&sub) || !AnyValue(sub, depth + 1, &v)) {
        return false;
      }
      if (json.size() > 1) json += ',';
      json += v.json;
      return true;
    });
    if (!ok) return false;
    *out = JsonValue(json + "]");
    return true;
  }

  bool KvList(std::string_view in, int depth, Value* out) {
    std::string json = "{";
    bool ok = Fields(in, "KeyValueList", [&](uint32_t f, uint32_t wt, PbReader* r) {
      if (f != 1) return Skip(r, wt);
      std::string_view sub;
      Attr a;
      Value v;
      if (!Want(wt, kLen, "values") || !r->Bytes(&sub) || !KeyValue(sub, depth + 1, &a, &v)) {
        return false;
      }
      if (json.size() > 1) json += ',';
      AppendJsonString(&json, a.key);
      json += ':';
      json += v.json;
      return true;
    });
    if (!ok) return false;
    *out = JsonValue(json + "}");
    return true;
  }

  Converter* out_;
  std::string* error_;

 public:
  std::string context_;  // the innermost message being read at the first error
};

// ---------------------------------------------------------------------------
// The OTLP JSON mapping.

using nlohmann::json;

// Nesting deeper than `max` anywhere in the text (checked before parsing).
bool TooDeep(std::string_view s, int max) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

class JsonDecoder {
 public:
  JsonDecoder(Converter* out, std::string* error) : out_(out), error_(error) {}

  bool Request(const json& j) {
    if (!j.is_object()) return Fail("the request must be a JSON object");
    const json* rms = Field(j, "resourceMetrics", "resource_metrics");
    if (rms == nullptr) return true;
    if (!IsArray(*rms, "resourceMetrics")) return false;
    for (const json& rm : *rms) {
      if (!ResourceMetrics(rm)) return false;
    }
    return true;
  }

 private:
  bool Fail(std::string msg) {
    if (error_->empty()) *error_ = std::move(msg);
    return false;
  }
  // A field by its lowerCamelCase name or its proto name; null when absent or null.
  static const json* Field(const json& obj, const char* camel, const char* snake) {
    auto it = obj.find(camel);
    if (it == obj.end() && snake != nullptr) it = obj.find(snake);
    if (it == obj.end() || it->is_null()) return nullptr;
    return &*it;
  }
  bool IsArray(const json& j, const char* what) {
    return j.is_array() || Fail(std::string(what) + " must be an array");
  }
  bool IsObject(const json& j, const char* what) {
    return j.is_object() || Fail(std::string(what) + " must be an object");
  }
  bool String(const json* j, const char* what, std::string* out) {
    if (j == nullptr) return true;
    if (!j->is_string()) return Fail(std::string(what) + " must be a string");
    *out = j->get<std::string>();
    return true;
  }
  // int64/uint64 fields: a number or a decimal string.
  bool Int(const json* j, const char* what, int64_t* out, bool is_unsigned) {
    if (j == nullptr) return true;
    if (j->is_number_unsigned()) {
      uint64_t u = j->get<uint64_t>();
      if (!is_unsigned && u > static_cast<uint64_t>(INT64_MAX)) {
        return Fail(std::string(what) + " is out of range");
      }
      *out = static_cast<int64_t>(u);
      return true;
    }
    if (j->is_number_integer()) {
      *out = j->get<int64_t>();
      return !(is_unsigned && *out < 0) || Fail(std::string(what) + " must not be negative");
    }
    if (j->is_number_float()) {
      double d = j->get<double>();
      if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) >= 9.2e18 ||
          (is_unsigned && d < 0)) {
        return Fail(std::string(what) + " must be an integer");
      }
      *out = static_cast<int64_t>(d);
      return true;
    }
    if (j->is_string()) {
      const std::string& s = j->get_ref<const std::string&>();
      const char* b = s.data();
      const char* e = b + s.size();
      std::from_chars_result r;
      if (is_unsigned) {
        uint64_t u = 0;
        r = std::from_chars(b, e, u);
        *out = static_cast<int64_t>(u);  // times: reinterpreted below
      } else {
        r = std::from_chars(b, e, *out);
      }
      if (r.ec == std::errc() && r.ptr == e && !s.empty()) return true;
    }
    return Fail(std::string(what) + " must be an integer or a decimal string");
  }
  bool Time(const json* j, const char* what, uint64_t* out) {
    int64_t v = 0;
    if (!Int(j, what, &v, true)) return false;
    *out = static_cast<uint64_t>(v);
    return true;
  }
  bool Double(const json* j, const char* what, double* out) {
    if (j->is_number()) {
      *out = j->get<double>();
      return true;
    }
    if (j->is_string()) {
      const std::string& s = j->get_ref<const std::string&>();
      if (s == "NaN")
        *out = std::nan("");
      else if (s == "Infinity")
        *out = INFINITY;
      else if (s == "-Infinity")
        *out = -INFINITY;
      else {
        auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
        if (r.ec != std::errc() || r.ptr != s.data() + s.size() || s.empty()) {
          return Fail(std::string(what) + " must be a number");
        }
      }
      return true;
    }
    return Fail(std::string(what) + " must be a number");
  }

  bool ResourceMetrics(const json& rm) {
    if (!IsObject(rm, "resourceMetrics[]")) return false;
    Resource resource;
    if (const json* res = Field(rm, "resource", nullptr)) {
      if (!IsObject(*res, "resource")) return false;
      if (const json* attrs = Field(*res, "attributes", nullptr)) {
        if (!IsArray(*attrs, "resource.attributes")) return false;
        for (const json& kv : *attrs) {
          Attr a;
          if (!KeyValue(kv, 0, &a)) return false;
          NoteResourceAttr(a, &resource);
        }
      }
    }
    const json* sms = Field(rm, "scopeMetrics", "scope_metrics");
    if (sms == nullptr) return true;
    if (!IsArray(*sms, "scopeMetrics")) return false;
    for (const json& sm : *sms) {
      if (!IsObject(sm, "scopeMetrics[]")) return false;
      const json* ms = Field(sm, "metrics", nullptr);
      if (ms == nullptr) continue;
      if (!IsArray(*ms, "metrics")) return false;
      for (const json& m : *ms) {
        if (!MetricObj(m, resource)) return false;
      }
    }
    return true;
  }

  bool MetricObj(const json& j, const Resource& resource) {
    if (!IsObject(j, "metrics[]")) return false;
    Metric m;
    if (!String(Field(j, "name", nullptr), "name", &m.name) ||
        !String(Field(j, "description", nullptr), "description", &m.description)) {
      return false;
    }
    static constexpr std::pair<const char*, const char*> kData[] = {
        {"gauge", nullptr},
        {"sum", nullptr},
        {"histogram", nullptr},
        {"exponentialHistogram", "exponential_histogram"},
        {"summary", nullptr}};
    static constexpr Kind kKinds[] = {Kind::kGauge, Kind::kSum, Kind::kHistogram,
                                      Kind::kExponentialHistogram, Kind::kSummary};
    const json* data = nullptr;
    for (size_t i = 0; i < std::size(kData) && data == nullptr; ++i) {
      data = Field(j, kData[i].first, kData[i].second);
      if (data != nullptr) m.kind = kKinds[i];
    }
    if (data == nullptr) return true;
    if (!IsObject(*data, "metric data")) return false;
    const json* points = Field(*data, "dataPoints", "data_points");
    if (points != nullptr && !IsArray(*points, "dataPoints")) return false;
    if (m.kind == Kind::kSum) {
      if (const json* t = Field(*data, "aggregationTemporality", "aggregation_temporality")) {
        if (t->is_string() && t->get_ref<const std::string&>() == "AGGREGATION_TEMPORALITY_DELTA") {
          m.temporality = 1;
        } else if (t->is_string() &&
                   t->get_ref<const std::string&>() == "AGGREGATION_TEMPORALITY_CUMULATIVE") {
          m.temporality = 2;
        } else if (!Int(t, "aggregationTemporality", &m.temporality, false)) {
          return false;
        }
      }
      if (const json* mono = Field(*data, "isMonotonic", "is_monotonic")) {
        if (!mono->is_boolean()) return Fail("isMonotonic must be a boolean");
        m.monotonic = mono->get<bool>();
      }
    }
    if (points != nullptr) {
      if (m.kind == Kind::kGauge || m.kind == Kind::kSum) {
        for (const json& p : *points) {
          m.points.emplace_back();
          if (!NumberDataPoint(p, &m.points.back())) return false;
        }
      } else {
        m.other_points = points->size();
      }
    }
    out_->Add(resource, std::move(m));
    return true;
  }

  bool NumberDataPoint(const json& j, Point* p) {
    if (!IsObject(j, "dataPoints[]")) return false;
    if (const json* attrs = Field(j, "attributes", nullptr)) {
      if (!IsArray(*attrs, "attributes")) return false;
      for (const json& kv : *attrs) {
        Attr a;
        if (!KeyValue(kv, 0, &a)) return false;
        p->attrs.push_back(std::move(a));
      }
    }
    uint64_t start = 0;
    if (!Time(Field(j, "startTimeUnixNano", "start_time_unix_nano"), "startTimeUnixNano", &start) ||
        !Time(Field(j, "timeUnixNano", "time_unix_nano"), "timeUnixNano", &p->time_ns)) {
      return false;
    }
    if (const json* d = Field(j, "asDouble", "as_double")) {
      if (!Double(d, "asDouble", &p->value)) return false;
      p->has_value = true;
    } else if (const json* i = Field(j, "asInt", "as_int")) {
      int64_t v = 0;
      if (!Int(i, "asInt", &v, false)) return false;
      p->value = static_cast<double>(v);
      p->has_value = true;
    }
    int64_t flags = 0;
    if (!Int(Field(j, "flags", nullptr), "flags", &flags, true)) return false;
    p->flags = static_cast<uint64_t>(flags);
    return true;
  }

  bool KeyValue(const json& j, int depth, Attr* out, Value* json_value = nullptr) {
    if (!IsObject(j, "attribute")) return false;
    if (!String(Field(j, "key", nullptr), "attribute key", &out->key)) return false;
    Value v;
    if (const json* value = Field(j, "value", nullptr)) {
      if (!AnyValue(*value, depth + 1, &v)) return false;
    }
    if (json_value != nullptr) *json_value = v;
    out->value = std::move(v.text);
    return true;
  }

  bool AnyValue(const json& j, int depth, Value* out) {
    if (depth > kMaxAnyValueDepth) {
      return Fail("attribute values nested deeper than " + std::to_string(kMaxAnyValueDepth));
    }
    if (!IsObject(j, "attribute value")) return false;
    const json* f;
    if ((f = Field(j, "stringValue", "string_value")) != nullptr) {
      std::string s;
      if (!String(f, "stringValue", &s)) return false;
      *out = StringValue(std::move(s));
    } else if ((f = Field(j, "boolValue", "bool_value")) != nullptr) {
      if (!f->is_boolean()) return Fail("boolValue must be a boolean");
      *out = PlainValue(f->get<bool>() ? "true" : "false");
    } else if ((f = Field(j, "intValue", "int_value")) != nullptr) {
      int64_t v = 0;
      if (!Int(f, "intValue", &v, false)) return false;
      *out = PlainValue(std::to_string(v));
    } else if ((f = Field(j, "doubleValue", "double_value")) != nullptr) {
      double d = 0;
      if (!Double(f, "doubleValue", &d)) return false;
      *out = DoubleValue(d);
    } else if ((f = Field(j, "bytesValue", "bytes_value")) != nullptr) {
      std::string s;
      if (!String(f, "bytesValue", &s)) return false;
      *out = StringValue(std::move(s));  // already base64 in OTLP JSON
    } else if ((f = Field(j, "arrayValue", "array_value")) != nullptr) {
      if (!IsObject(*f, "arrayValue")) return false;
      std::string text = "[";
      if (const json* values = Field(*f, "values", nullptr)) {
        if (!IsArray(*values, "arrayValue.values")) return false;
        for (const json& e : *values) {
          Value v;
          if (!AnyValue(e, depth + 1, &v)) return false;
          if (text.size() > 1) text += ',';
          text += v.json;
        }
      }
      *out = JsonValue(text + "]");
    } else if ((f = Field(j, "kvlistValue", "kvlist_value")) != nullptr) {
      if (!IsObject(*f, "kvlistValue")) return false;
      std::string text = "{";
      if (const json* values = Field(*f, "values", nullptr)) {
        if (!IsArray(*values, "kvlistValue.values")) return false;
        for (const json& e : *values) {
          Attr a;
          Value v;
          if (!KeyValue(e, depth + 1, &a, &v)) return false;
          if (text.size() > 1) text += ',';
          AppendJsonString(&text, a.key);
          text += ':';
          text += v.json;
        }
      }
      *out = JsonValue(text + "}");
    }
    return true;
  }

  Converter* out_;
  std::string* error_;
};

bool NameChar(char c, bool colon) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         (colon && c == ':');
}

std::string Sanitize(std::string_view name, bool colon) {
  std::string out(name);
  for (char& c : out) {
    if (!NameChar(c, colon)) c = '_';
  }
  return out;
}

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutLen(std::string* out, uint32_t field, std::string_view bytes) {
  PutVarint(out, (field << 3) | kLen);
  PutVarint(out, bytes.size());
  out->append(bytes);
}

}  // namespace

std::string SanitizeMetricName(std::string_view name) {
  std::string out = Sanitize(name, true);
  if (!out.empty() && out[0] >= '0' && out[0] <= '9') out.insert(0, "_");
  return out;
}

std::string SanitizeLabelName(std::string_view name) {
  std::string out = Sanitize(name, false);
  if (out.empty()) return out;
  if (out[0] >= '0' && out[0] <= '9') return "key_" + out;
  if (out.starts_with("__")) return "key" + out;
  return out;
}

Result<DecodeResult> DecodeMetrics(std::string_view body, Encoding encoding,
                                   const DecodeOptions& options) {
  Converter converter(options);
  std::string error;
  if (encoding == Encoding::kProtobuf) {
    PbDecoder d(&converter, &error);
    if (!d.Request(body)) {
      if (error.empty()) error = "malformed message";
      return InvalidArgument("cannot decode the protobuf ExportMetricsServiceRequest: " + error +
                             (d.context_.empty() ? "" : " (in " + d.context_ + ")"));
    }
  } else {
    if (TooDeep(body, kMaxJsonDepth)) {
      return InvalidArgument(
          "cannot decode the JSON ExportMetricsServiceRequest: nested deeper than " +
          std::to_string(kMaxJsonDepth) + " levels");
    }
    json j;
    try {
      j = json::parse(body.begin(), body.end());
    } catch (const json::exception& e) {
      return InvalidArgument(std::string("cannot decode the JSON ExportMetricsServiceRequest: ") +
                             e.what());
    }
    JsonDecoder d(&converter, &error);
    if (!d.Request(j)) {
      return InvalidArgument("cannot decode the JSON ExportMetricsServiceRequest: " + error);
    }
  }
  return converter.Finish();
}

Result<std::string> Gunzip(std::string_view in, size_t max_out) {
  if (in.size() > UINT_MAX) return ResourceExhausted("gzip body too large");
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return Internal("zlib: inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  std::vector<char> buf(64 * 1024);
  Status st;
  for (;;) {
    zs.next_out = reinterpret_cast<Bytef*>(buf.data());
    zs.avail_out = static_cast<uInt>(buf.size());
    int rc = inflate(&zs, Z_NO_FLUSH);
    size_t got = buf.size() - zs.avail_out;
    if (got > max_out - out.size()) {
      st = ResourceExhausted("the gzip body inflates to more than " + std::to_string(max_out) +
                             " bytes");
      break;
    }
    out.append(buf.data(), got);
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      if (inflateReset(&zs) != Z_OK) {
        st = InvalidArgument("invalid gzip body: cannot read the next member");
        break;
      }
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
      st = InvalidArgument("invalid gzip body: truncated");
    } else {
      st = InvalidArgument(std::string("invalid gzip body: ") +
                           (zs.msg != nullptr ? zs.msg : "corrupt data"));
    }
    break;
  }
  inflateEnd(&zs);
  if (!st.ok()) return st;
  return out;
}

std::string EncodeResponse(Encoding encoding, uint64_t rejected, std::string_view message) {
  bool partial = rejected != 0 || !message.empty();
  if (encoding == Encoding::kJson) {
    if (!partial) return "{}";
    JsonWriter w;
    w.BeginObject().Key("partialSuccess").BeginObject();
    w.Key("rejectedDataPoints").String(std::to_string(rejected));
    w.Key("errorMessage").String(message);
    w.EndObject().EndObject();
    return w.Release();
  }
  if (!partial) return "";
  std::string inner;
  if (rejected != 0) {
    PutVarint(&inner, (1 << 3) | kVarint);
    PutVarint(&inner, rejected);
  }
  if (!message.empty()) PutLen(&inner, 2, message);
  std::string out;
  PutLen(&out, 1, inner);
  return out;
}

std::string EncodeStatus(Encoding encoding, int code, std::string_view message) {
  if (encoding == Encoding::kJson) {
    JsonWriter w;
    w.BeginObject().Key("code").Int(code).Key("message").String(message).EndObject();
    return w.Release();
  }
  std::string out;
  PutVarint(&out, (1 << 3) | kVarint);
  PutVarint(&out, static_cast<uint64_t>(static_cast<int64_t>(code)));
  PutLen(&out, 2, message);
  return out;
}

}  // namespace vigil::ingest::otlp
