// Matrix::Problems: the rules that keep the tables from contradicting each
// other (docs/env-matrix.md, "Consistency"). Parse already checked each row
// on its own (fields, sources, duplicate keys); these rules look across rows.
#include <algorithm>
#include <map>
#include <set>

#include "env/matrix.h"

namespace vigil::env {
namespace {

const MinorCompatRow* MinorCompatOf(const Matrix& m, int major) {
  for (const MinorCompatRow& r : m.minor_compat()) {
    if (r.cuda_major == major) return &r;
  }
  return nullptr;
}

bool HasToolkit(const Matrix& m, const Version& cuda) {
  return std::any_of(m.cuda_drivers().begin(), m.cuda_drivers().end(), [&](const CudaDriverRow& r) {
    return r.cuda.major() == cuda.major() && r.cuda.minor() == cuda.minor();
  });
}

void CheckDrivers(const Matrix& m, std::vector<std::string>* out) {
  std::vector<CudaDriverRow> rows = m.cuda_drivers();
  std::sort(rows.begin(), rows.end(),
            [](const CudaDriverRow& a, const CudaDriverRow& b) { return a.cuda < b.cuda; });
  // A later toolkit never needs an older driver: the driver is backward
  // compatible, so a dip would mean one of the two rows is wrong.
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].min_driver < rows[i - 1].min_driver) {
      out->push_back("cuda_driver: CUDA " + rows[i].cuda.ToString() + " needs driver " +
                     rows[i].min_driver.ToString() + ", older than the " +
                     rows[i - 1].min_driver.ToString() + " of CUDA " + rows[i - 1].cuda.ToString());
    }
  }
  std::map<int, Version> newest_need;  // major -> driver of its newest release
  for (const CudaDriverRow& r : rows) newest_need[r.cuda.major()] = r.min_driver;
  for (const auto& [major, need] : newest_need) {
    const MinorCompatRow* mc = MinorCompatOf(m, major);
    if (major < 11) continue;  // minor version compatibility starts with CUDA 11
    if (mc == nullptr) {
      out->push_back("minor_compat: no row for CUDA " + std::to_string(major) +
                     ", which cuda_driver lists");
    } else if (need < mc->min_driver) {
      out->push_back("minor_compat: CUDA " + std::to_string(major) + "'s floor " +
                     mc->min_driver.ToString() + " is above what its newest toolkit needs (" +
                     need.ToString() + ")");
    }
  }
  std::vector<MinorCompatRow> mc = m.minor_compat();
  std::sort(mc.begin(), mc.end(), [](const MinorCompatRow& a, const MinorCompatRow& b) {
    return a.cuda_major < b.cuda_major;
  });
  for (size_t i = 1; i < mc.size(); ++i) {
    if (!(mc[i - 1].min_driver < mc[i].min_driver)) {
      out->push_back("minor_compat: CUDA " + std::to_string(mc[i].cuda_major) +
                     "'s floor is not above CUDA " + std::to_string(mc[i - 1].cuda_major) + "'s");
    }
  }
}

void CheckGpus(const Matrix& m, std::vector<std::string>* out) {
  std::set<std::string> segments;
  for (const ForwardCompatRow& r : m.forward_compat()) segments.insert(r.segment);
  std::map<std::vector<std::string>, std::string> names;
  for (const GpuRow& g : m.gpus()) {
    if (!segments.count(g.segment)) {
      out->push_back("gpu: " + g.model + ": segment \"" + g.segment +
                     "\" has no forward_compat row");
    }
    auto [it, inserted] = names.emplace(GpuNameTokens(g.model), g.model);
    if (!inserted)
      out->push_back("gpu: \"" + g.model + "\" and \"" + it->second + "\" are one name");
  }
}

void CheckCudnn(const Matrix& m, std::vector<std::string>* out) {
  for (const CudnnRow& r : m.cudnn()) {
    std::string what = "cudnn: " + r.cudnn.ToString() + " on CUDA " + r.cuda_first.ToString() +
                       "-" + r.cuda_last.ToString();
    if (r.cuda_last < r.cuda_first || r.cuda_first.major() != r.cuda_last.major()) {
      out->push_back(what + ": not a range within one CUDA major");
      continue;
    }
    const MinorCompatRow* mc = MinorCompatOf(m, r.cuda_first.major());
    if (mc != nullptr && r.min_driver < mc->min_driver) {
      out->push_back(what + ": driver " + r.min_driver.ToString() + " is below CUDA's own floor " +
                     mc->min_driver.ToString());
    }
  }
}

const CudnnRow* CudnnRowFor(const Matrix& m, const Version& cudnn, int cuda_major) {
  for (const CudnnRow& r : m.cudnn()) {
    if (r.cuda_first.major() == cuda_major && r.cudnn.IsPrefixOf(cudnn)) return &r;
  }
  return nullptr;
}

void CheckTorch(const Matrix& m, std::vector<std::string>* out) {
  for (const TorchRow& t : m.torch()) {
    std::string what = "torch: " + t.release.ToString() + "+" + t.variant;
    if (CudaOfVariant(t.variant).value_or(Version()) != t.cuda) {
      out->push_back(what + ": the variant names CUDA " +
                     CudaOfVariant(t.variant).value_or(Version()).ToString() + ", the row " +
                     t.cuda.ToString());
    }
    if (!HasToolkit(m, t.cuda) || MinorCompatOf(m, t.cuda.major()) == nullptr) {
      out->push_back(what + ": CUDA " + t.cuda.ToString() +
                     " has no cuda_driver/minor_compat rows, so its driver need is unknown");
    }
    if (t.python_last < t.python_first) out->push_back(what + ": Python range is reversed");
    // A bundled cuDNN that the cuDNN table knows must be one that supports
    // the wheel's CUDA.
    if (const CudnnRow* c = CudnnRowFor(m, t.cudnn, t.cuda.major());
        c != nullptr && (t.cuda < c->cuda_first || c->cuda_last < t.cuda)) {
      out->push_back(what + ": bundles cuDNN " + t.cudnn.ToString() + ", which supports CUDA " +
                     c->cuda_first.ToString() + "-" + c->cuda_last.ToString() + " only");
    }
  }
  for (const TorchArchRow& a : m.torch_archs()) {
    bool known = std::any_of(m.torch().begin(), m.torch().end(), [&](const TorchRow& t) {
      return t.release == a.release && t.variant == a.variant;
    });
    if (!known) {
      out->push_back("torch_archs: " + a.release.ToString() + "+" + a.variant +
                     " has no torch row");
    }
  }
}

void CheckFrameworks(const Matrix& m, std::vector<std::string>* out) {
  std::vector<TensorflowRow> tf = m.tensorflow();
  std::sort(tf.begin(), tf.end(),
            [](const TensorflowRow& a, const TensorflowRow& b) { return a.release < b.release; });
  for (size_t i = 0; i < tf.size(); ++i) {
    std::string what = "tensorflow: " + tf[i].release.ToString();
    if (tf[i].python_last < tf[i].python_first) out->push_back(what + ": Python range is reversed");
    if (tf[i].cuda.major() >= 11 && !HasToolkit(m, tf[i].cuda)) {
      out->push_back(what + ": CUDA " + tf[i].cuda.ToString() + " has no cuda_driver row");
    }
    // Releases move to newer CUDA, never back.
    if (i > 0 && tf[i].cuda < tf[i - 1].cuda) {
      out->push_back(what + ": tested on CUDA " + tf[i].cuda.ToString() + ", older than " +
                     tf[i - 1].release.ToString() + "'s " + tf[i - 1].cuda.ToString());
    }
  }
  for (const JaxRow& j : m.jax()) {
    std::string what = "jax: " + j.plugin;
    if (j.built_cuda < j.min_cuda)
      out->push_back(what + ": built with CUDA older than its minimum");
    if (!(j.min_cudnn < j.cudnn_below)) out->push_back(what + ": empty cuDNN range");
    if (!HasToolkit(m, j.min_cuda)) {
      out->push_back(what + ": CUDA " + j.min_cuda.ToString() + " has no cuda_driver row");
    }
  }
}

}  // namespace

std::vector<std::string> Matrix::Problems() const {
  std::vector<std::string> out;
  CheckDrivers(*this, &out);
  CheckGpus(*this, &out);
  CheckCudnn(*this, &out);
  CheckTorch(*this, &out);
  CheckFrameworks(*this, &out);
  return out;
}

}  // namespace vigil::env
