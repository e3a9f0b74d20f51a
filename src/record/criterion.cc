#include "kernodeck/record/criterion.h"

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>

#include "kernodeck/util/strings.h"

namespace kernodeck::record {

std::string Criterion::str() const {
  if (kind == "exact") return "exact";
  if (kind == "topk") return "topk:" + std::to_string(k) + ">=" + std::to_string(threshold);
  return kind + (kind == "cosine" ? ">=" : "<=") + std::to_string(threshold);
}

Result<Criterion> parseCriterion(std::string_view s) {
  std::string t(util::trim(s));
  Criterion c;
  if (t == "exact") {
    c.kind = "exact";
    return c;
  }
  static const std::regex re(R"(^(abs|rel|cosine)\s*(<=|>=)\s*([0-9.eE+-]+)$)");
  static const std::regex topk(R"(^topk:(\d+)\s*>=\s*([0-9.eE+-]+)$)");
  std::smatch m;
  try {
    if (std::regex_match(t, m, re)) {
      c.kind = m[1].str();
      c.threshold = std::stod(m[3].str());
      bool ge = m[2].str() == ">=";
      if ((c.kind == "cosine") != ge) return Error::Invalid("criterion '" + t + "': use abs<=X, rel<=X or cosine>=X");
    } else if (std::regex_match(t, m, topk)) {
      c.kind = "topk";
      c.k = std::stoi(m[1].str());
      c.threshold = std::stod(m[2].str());
      if (c.k <= 0) return Error::Invalid("criterion '" + t + "': K must be positive");
    } else {
      return Error::Invalid("criterion '" + util::printable(t, 80) + "' is not exact, abs<=X, rel<=X, cosine>=X or topk:K>=X");
    }
  } catch (const std::exception&) {
    return Error::Invalid("criterion '" + util::printable(t, 80) + "' has a bad number");
  }
  if (!(c.threshold >= 0)) return Error::Invalid("criterion threshold must be a non-negative number");
  return c;
}

Comparison compare(const Criterion& c, const Tensor& e, const Tensor& a, const std::vector<std::string>& ids) {
  Comparison out;
  int64_t rows = e.shape.empty() ? 1 : e.shape[0];
  int64_t width = rows ? e.elements() / std::max<int64_t>(rows, 1) : 0;
  std::vector<SampleError> errs;
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const double* x = e.values.data() + r * width;
    const double* y = a.values.data() + r * width;
    double err = 0;
    if (c.kind == "exact" || c.kind == "abs") {
      for (int64_t i = 0; i < width; ++i) err = std::max(err, std::fabs(x[i] - y[i]));
    } else if (c.kind == "rel") {
      for (int64_t i = 0; i < width; ++i) err = std::max(err, std::fabs(x[i] - y[i]) / std::max(std::fabs(x[i]), 1e-12));
    } else if (c.kind == "cosine") {
      double dot = 0, nx = 0, ny = 0;
      for (int64_t i = 0; i < width; ++i) dot += x[i] * y[i], nx += x[i] * x[i], ny += y[i] * y[i];
      double cos = nx == 0 && ny == 0 ? 1 : dot / (std::sqrt(nx) * std::sqrt(ny) + 1e-300);
      err = 1 - cos;
    } else {  // topk
      int k = static_cast<int>(std::min<int64_t>(c.k, width));
      auto top = [&](const double* v) {
        std::vector<int64_t> idx(static_cast<size_t>(width));
        for (int64_t i = 0; i < width; ++i) idx[static_cast<size_t>(i)] = i;
        std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int64_t p, int64_t q) { return v[p] > v[q]; });
        return std::set<int64_t>(idx.begin(), idx.begin() + k);
      };
      auto tx = top(x), ty = top(y);
      int common = 0;
      for (auto i : tx) common += ty.count(i) ? 1 : 0;
      double overlap = k ? static_cast<double>(common) / k : 1;
      total += overlap;
      err = 1 - overlap;
    }
    errs.push_back({r < static_cast<int64_t>(ids.size()) ? ids[static_cast<size_t>(r)] : "#" + std::to_string(r), err});
  }
  std::sort(errs.begin(), errs.end(), [](const SampleError& p, const SampleError& q) { return p.error > q.error; });
  for (size_t i = 0; i < std::min<size_t>(10, errs.size()); ++i) out.worst.push_back(errs[i]);
  double worst = errs.empty() ? 0 : errs.front().error;
  if (c.kind == "exact") out.pass = worst == 0, out.measure = worst;
  else if (c.kind == "abs" || c.kind == "rel") out.pass = worst <= c.threshold, out.measure = worst;
  else if (c.kind == "cosine") out.pass = 1 - worst >= c.threshold, out.measure = 1 - worst;
  else {
    out.measure = rows ? total / static_cast<double>(rows) : 1;
    out.pass = out.measure >= c.threshold;
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s: measured %.6g over %lld sample(s)", c.str().c_str(), out.measure, static_cast<long long>(rows));
  out.summary = buf;
  return out;
}

}  // namespace kernodeck::record
