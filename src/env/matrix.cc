#include "env/matrix.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "core/env.h"
#include "core/strings.h"

namespace vigil::env {

// The text of src/env/data/matrix.txt, compiled in (builtin_matrix.cc.in).
extern const char kBuiltinMatrixText[];

namespace {

constexpr size_t kMaxUpdateFileBytes = 4 << 20;

const TableSpec* FindSpec(std::string_view name) {
  for (const TableSpec& spec : TableSpecs()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

std::string KnownTables() {
  std::string out;
  for (const TableSpec& spec : TableSpecs()) {
    if (!out.empty()) out += ", ";
    out += spec.name;
  }
  return out;
}

// A source is a page a person can open: https and a host.
bool IsHttpsUrl(std::string_view s) {
  if (!StartsWith(s, "https://")) return false;
  std::string_view rest = s.substr(8);
  size_t host_end = rest.find('/');
  std::string_view host = rest.substr(0, host_end);
  return !host.empty() && host.find('.') != std::string_view::npos &&
         s.find_first_of(" \t") == std::string_view::npos;
}

std::string Key(const Row& row) {
  const TableSpec* spec = FindSpec(row.table);
  std::string key = row.table;
  for (size_t i = 0; i < spec->key_columns; ++i) key += "|" + row.fields[i];
  return key;
}

// Column parsers: each names the column in its message, and the caller adds
// where the row came from.
Result<Version> Field(const Row& row, size_t i) {
  auto v = ParseVersion(row.fields[i]);
  if (!v.ok()) return v.status().WithContext(FindSpec(row.table)->columns[i]);
  return v;
}

Status RowError(const Row& row, const Status& s) {
  return InvalidArgument(row.origin + ": " + row.table + ": " + s.message());
}

Result<std::vector<std::string>> ParseArchs(std::string_view text) {
  std::vector<std::string> out;
  int last = -1;
  for (std::string_view a : SplitFields(text)) {
    std::string_view digits = StartsWith(a, "sm_")        ? a.substr(3)
                              : StartsWith(a, "compute_") ? a.substr(8)
                                                          : std::string_view();
    if (!digits.empty() && digits.back() == 'a') digits.remove_suffix(1);
    auto n = ParseInt64(digits);
    if (digits.size() < 2 || !n || *n < 10) {
      return InvalidArgument("architectures: \"" + std::string(a) +
                             "\" is not sm_XY, sm_XYa or compute_XY");
    }
    // Sorted, so a reader sees at a glance where a wheel stops.
    if (*n < last)
      return InvalidArgument("architectures: not in ascending order at " + std::string(a));
    last = static_cast<int>(*n);
    out.emplace_back(a);
  }
  if (out.empty()) return InvalidArgument("architectures: empty");
  return out;
}

}  // namespace

const std::vector<TableSpec>& TableSpecs() {
  static const std::vector<TableSpec> kSpecs = {
      {"cuda_driver", "CUDA toolkit -> minimum Linux driver", {"cuda", "min_driver"}, 1},
      {"minor_compat",
       "CUDA minor version compatibility (any X.* toolkit on this driver)",
       {"cuda_major", "min_driver"},
       1},
      {"forward_compat",
       "CUDA forward compatibility (cuda-compat) by GPU segment",
       {"segment", "support"},
       1},
      {"gpu", "GPU model -> compute capability", {"model", "compute_capability", "segment"}, 1},
      {"cudnn", "cuDNN -> CUDA", {"cudnn", "cuda_first", "cuda_last", "min_driver"}, 2},
      {"torch",
       "PyTorch wheels",
       {"release", "variant", "cuda", "cudnn", "nccl", "python_first", "python_last"},
       2},
      {"torch_archs", "GPU code in the PyTorch wheels", {"release", "variant", "archs"}, 2},
      {"tensorflow",
       "TensorFlow tested build configurations",
       {"release", "python_first", "python_last", "cudnn", "cuda"},
       1},
      {"jax",
       "JAX CUDA plugins",
       {"plugin", "built_cuda", "min_cuda", "min_cudnn", "cudnn_below", "min_nccl"},
       1},
  };
  return kSpecs;
}

std::vector<std::string> GpuNameTokens(std::string_view name) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty() && cur != "nvidia" && cur != "geforce" && cur != "tesla" && cur != "quadro") {
      out.push_back(cur);
    }
    cur.clear();
  };
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      flush();
    }
  }
  flush();
  return out;
}

Result<Matrix> Matrix::Parse(std::string_view text, std::string_view origin) {
  std::vector<Row> rows;
  std::map<std::string, std::string> seen;  // key -> origin of its first row
  size_t line_no = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++line_no;
    line = TrimSpace(line);
    if (line.empty() || line.front() == '#') continue;
    Row row;
    row.origin = std::string(origin) + ":" + std::to_string(line_no);
    std::vector<std::string_view> cells = Split(line, '|');
    row.table = std::string(TrimSpace(cells[0]));
    const TableSpec* spec = FindSpec(row.table);
    if (spec == nullptr) {
      return InvalidArgument(row.origin + ": unknown table \"" + row.table +
                             "\" (known: " + KnownTables() + ")");
    }
    if (cells.size() != spec->columns.size() + 2) {
      return InvalidArgument(
          row.origin + ": " + row.table + " rows have " + std::to_string(spec->columns.size() + 2) +
          " '|'-separated fields (table, " + std::to_string(spec->columns.size()) +
          " columns, source), this one has " + std::to_string(cells.size()));
    }
    for (size_t i = 1; i + 1 < cells.size(); ++i) {
      std::string_view f = TrimSpace(cells[i]);
      row.fields.emplace_back(f == "-" ? std::string_view() : f);
    }
    row.source = std::string(TrimSpace(cells.back()));
    if (!IsHttpsUrl(row.source)) {
      return InvalidArgument(
          row.origin + ": " + row.table + ": the source \"" + row.source +
          "\" is not an https URL: every row names the public page it comes from");
    }
    for (size_t i = 0; i < spec->key_columns; ++i) {
      if (row.fields[i].empty()) {
        return InvalidArgument(row.origin + ": " + row.table + ": key column " +
                               std::string(spec->columns[i]) + " is empty");
      }
    }
    auto [it, inserted] = seen.emplace(Key(row), row.origin);
    if (!inserted) {
      return InvalidArgument(row.origin + ": " + row.table + ": duplicate of " + it->second +
                             " (same " + std::string(spec->columns[0]) + ")");
    }
    rows.push_back(std::move(row));
  }
  return FromRows(std::move(rows));
}

Result<Matrix> Matrix::FromRows(std::vector<Row> rows) {
  Matrix m;
  for (const Row& row : rows) VIGIL_RETURN_IF_ERROR(m.AddTyped(row));
  m.rows_ = std::move(rows);
  return m;
}

Status Matrix::AddTyped(const Row& row) {
  const std::vector<std::string>& f = row.fields;
  auto fail = [&](const Status& s) { return RowError(row, s); };
#define VIGIL_FIELD(var, i) \
  auto var = Field(row, i); \
  if (!var.ok()) return fail(var.status())
  if (row.table == "cuda_driver") {
    VIGIL_FIELD(cuda, 0);
    VIGIL_FIELD(driver, 1);
    cuda_drivers_.push_back({*cuda, *driver, row.source});
  } else if (row.table == "minor_compat") {
    VIGIL_FIELD(major, 0);
    VIGIL_FIELD(driver, 1);
    if (major->parts().size() != 1) return fail(InvalidArgument("cuda_major: one number, as 12"));
    minor_compat_.push_back({major->major(), *driver, row.source});
  } else if (row.table == "forward_compat") {
    ForwardCompat support;
    if (f[1] == "yes") {
      support = ForwardCompat::kSupported;
    } else if (f[1] == "select") {
      support = ForwardCompat::kSelectSkus;
    } else if (f[1] == "no") {
      support = ForwardCompat::kUnsupported;
    } else {
      return fail(InvalidArgument("support: \"" + f[1] + "\" is not yes, select or no"));
    }
    forward_compat_.push_back({f[0], support, row.source});
  } else if (row.table == "gpu") {
    auto cc = ParseComputeCapability(f[1]);
    if (!cc.ok()) return fail(cc.status());
    if (GpuNameTokens(f[0]).empty()) return fail(InvalidArgument("model: no name"));
    if (f[2].empty()) return fail(InvalidArgument("segment: empty"));
    gpus_.push_back({f[0], *cc, f[2], row.source});
  } else if (row.table == "cudnn") {
    VIGIL_FIELD(cudnn, 0);
    VIGIL_FIELD(first, 1);
    VIGIL_FIELD(last, 2);
    VIGIL_FIELD(driver, 3);
    cudnn_.push_back({*cudnn, *first, *last, *driver, row.source});
  } else if (row.table == "torch") {
    VIGIL_FIELD(release, 0);
    auto variant_cuda = CudaOfVariant(f[1]);
    if (!variant_cuda.ok()) return fail(variant_cuda.status());
    VIGIL_FIELD(cuda, 2);
    VIGIL_FIELD(cudnn, 3);
    std::optional<Version> nccl;
    if (!f[4].empty()) {
      VIGIL_FIELD(n, 4);
      nccl = *n;
    }
    VIGIL_FIELD(py_first, 5);
    VIGIL_FIELD(py_last, 6);
    torch_.push_back({*release, f[1], *cuda, *cudnn, nccl, *py_first, *py_last, row.source});
  } else if (row.table == "torch_archs") {
    VIGIL_FIELD(release, 0);
    auto archs = ParseArchs(f[2]);
    if (!archs.ok()) return fail(archs.status());
    torch_archs_.push_back({*release, f[1], *archs, row.source});
  } else if (row.table == "tensorflow") {
    VIGIL_FIELD(release, 0);
    VIGIL_FIELD(py_first, 1);
    VIGIL_FIELD(py_last, 2);
    VIGIL_FIELD(cudnn, 3);
    VIGIL_FIELD(cuda, 4);
    tensorflow_.push_back({*release, *py_first, *py_last, *cudnn, *cuda, row.source});
  } else if (row.table == "jax") {
    VIGIL_FIELD(built, 1);
    VIGIL_FIELD(min_cuda, 2);
    VIGIL_FIELD(min_cudnn, 3);
    VIGIL_FIELD(cudnn_below, 4);
    VIGIL_FIELD(min_nccl, 5);
    jax_.push_back({f[0], *built, *min_cuda, *min_cudnn, *cudnn_below, *min_nccl, row.source});
  }
#undef VIGIL_FIELD
  return Status::Ok();
}

const Matrix& Matrix::Builtin() {
  // Parsed once; the text is ours and a test parses it, so a failure here is
  // a build that never passed its tests.
  static const Matrix kBuiltin = [] {
    auto m = Parse(kBuiltinMatrixText, "builtin");
    if (!m.ok()) {
      std::fprintf(stderr, "vigil: built-in matrix: %s\n", m.status().message().c_str());
      std::abort();
    }
    return std::move(m).value();
  }();
  return kBuiltin;
}

Result<Matrix> Matrix::BuiltinWithUpdateFile(const std::string& path) {
  auto text = Env::Default()->ReadFile(path, kMaxUpdateFileBytes);
  if (!text.ok()) return text.status().WithContext("matrix update file");
  VIGIL_ASSIGN_OR_RETURN(Matrix update, Parse(*text, path));
  VIGIL_ASSIGN_OR_RETURN(Matrix merged, Builtin().MergedWith(update));
  std::vector<std::string> problems = merged.Problems();
  if (!problems.empty()) {
    return InvalidArgument(
        "matrix with " + path + " applied contradicts itself: " + problems[0] +
        (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : ""));
  }
  return merged;
}

Result<Matrix> Matrix::MergedWith(const Matrix& update) const {
  std::vector<Row> rows = rows_;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < rows.size(); ++i) index[Key(rows[i])] = i;
  for (const Row& row : update.rows_) {
    auto it = index.find(Key(row));
    if (it != index.end()) {
      rows[it->second] = row;
    } else {
      index[Key(row)] = rows.size();
      rows.push_back(row);
    }
  }
  return FromRows(std::move(rows));
}

std::string Matrix::Serialize() const {
  std::string out = "# vigil env matrix (docs/env-matrix.md)\n";
  std::string last_table;
  for (const Row& row : rows_) {
    if (row.table != last_table) {
      const TableSpec* spec = FindSpec(row.table);
      out += "\n# " + row.table;
      for (std::string_view c : spec->columns) out += " | " + std::string(c);
      out += " | source\n";
      last_table = row.table;
    }
    out += row.table;
    for (const std::string& f : row.fields) out += " | " + (f.empty() ? std::string("-") : f);
    out += " | " + row.source + "\n";
  }
  return out;
}

}  // namespace vigil::env
