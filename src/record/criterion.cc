#include "kernodeck/record/criterion.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <regex>
#include <set>

#include "kernodeck/util/strings.h"

namespace kernodeck::record {

std::string formatMeasure(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string formatAgainst(double v, double threshold, int minDigits) {
  char buf[40];
  for (int digits = std::clamp(minDigits, 3, 17); digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    double shown = std::strtod(buf, nullptr);
    if ((shown < threshold) == (v < threshold) && (shown > threshold) == (v > threshold)) break;
  }
  return buf;
}

std::string Criterion::str() const {
  if (kind == "exact") return "exact";
  if (kind == "topk" || kind == "knn") return kind + ":" + std::to_string(k) + ">=" + thresholdText;
  return kind + (kind == "cosine" ? ">=" : "<=") + thresholdText;
}

int Criterion::digits() const {
  int n = 0;
  bool leading = true;
  for (char ch : thresholdText) {
    if (ch == 'e' || ch == 'E') break;
    if (ch < '0' || ch > '9') continue;
    if (ch != '0') leading = false;
    n += leading ? 0 : 1;
  }
  return n;
}

std::string Criterion::measureName() const {
  if (kind == "exact" || kind == "abs") return "max abs error";
  if (kind == "rel") return "max rel error";
  if (kind == "cosine") return "min cosine";
  if (kind == "topk") return "mean top-" + std::to_string(k) + " overlap";
  return "mean " + std::to_string(k) + "-NN overlap";
}

namespace {

// A decimal number as people write thresholds: digits with an optional fraction and exponent,
// an optional sign (a negative one is refused with its own message). Parsed whole, so that
// "1.2.3" or "0x1p-3" is an error rather than a prefix read as a number.
Result<double> parseThreshold(const std::string& text, const std::string& criterion) {
  static const std::regex number(R"(^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$)");
  if (text.size() > 64 || !std::regex_match(text, number))  // bounded: a dossier's text
    return Error::Invalid("criterion '" + util::printable(criterion, 80) + "': '" + util::printable(text, 40) +
                          "' is not a number");
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v))
    return Error::Invalid("criterion '" + util::printable(criterion, 80) + "': '" + util::printable(text, 40) +
                          "' is not a finite number");
  return v;
}

}  // namespace

Result<Criterion> parseCriterion(std::string_view s) {
  std::string t(util::trim(s));
  Criterion c;
  if (t == "exact") {
    c.kind = "exact";
    c.thresholdText = "0";
    return c;
  }
  static const std::regex simple(R"(^([A-Za-z_]+)\s*(<=|>=)\s*(\S+)$)");
  static const std::regex ranked(R"(^(topk|knn):(\d{1,6})\s*>=\s*(\S+)$)");
  const std::string usage = "' is not exact, abs<=X, rel<=X, cosine>=X, topk:K>=X or knn:K>=X";
  std::smatch m;
  // Bounded before any regex reads it: a criterion is a few characters, and the text may be a
  // replayed dossier's (libstdc++'s std::regex recurses once per character).
  if (t.size() > 256) return Error::Invalid("criterion '" + util::printable(t, 80) + "' is too long (over 256 characters)");
  if (std::regex_match(t, m, ranked)) {
    c.kind = m[1].str();
    c.k = std::stoi(m[2].str());
    c.thresholdText = m[3].str();
    if (c.k <= 0) return Error::Invalid("criterion '" + t + "': K must be 1 or more");
  } else if (std::regex_match(t, m, simple)) {
    c.kind = m[1].str();
    c.thresholdText = m[3].str();
    if (c.kind != "abs" && c.kind != "rel" && c.kind != "cosine")
      return Error::Invalid("criterion '" + util::printable(t, 80) + usage + " (unknown metric '" +
                            util::printable(c.kind, 40) + "')");
    if ((c.kind == "cosine") != (m[2].str() == ">="))
      return Error::Invalid("criterion '" + t + "': use abs<=X, rel<=X or cosine>=X");
  } else {
    return Error::Invalid("criterion '" + util::printable(t, 80) + usage);
  }
  KDK_TRY_ASSIGN(c.threshold, parseThreshold(c.thresholdText, t));
  if (c.threshold < 0 || c.thresholdText[0] == '-')
    return Error::Invalid("criterion '" + t + "': " +
                          (c.higherIsBetter() ? std::string("a threshold below 0 accepts anything")
                                              : std::string("a tolerance cannot be negative")));
  if (c.kind == "cosine" && c.threshold > 1)
    return Error::Invalid("criterion '" + t + "': a cosine is at most 1, so no output could meet it");
  if ((c.kind == "topk" || c.kind == "knn") && c.threshold > 1)
    return Error::Invalid("criterion '" + t + "': an overlap is at most 1, so no output could meet it");
  return c;
}

namespace {

// The cosine of two rows; exactly 1 for bit-identical rows (rounding in the sums must not make
// identical outputs fail cosine>=1), and clamped to [-1, 1].
double cosine(const double* x, const double* y, int64_t n) {
  if (std::equal(x, x + n, y)) return 1;
  double dot = 0, nx = 0, ny = 0;
  for (int64_t i = 0; i < n; ++i) dot += x[i] * y[i], nx += x[i] * x[i], ny += y[i] * y[i];
  if (nx == 0 && ny == 0) return 1;
  if (nx == 0 || ny == 0) return 0;
  return std::clamp(dot / (std::sqrt(nx) * std::sqrt(ny)), -1.0, 1.0);
}

// The K rows nearest to each row (cosine similarity, ties by index), the row itself excluded.
std::vector<std::set<int64_t>> nearest(const Tensor& t, int64_t rows, int64_t width, int k) {
  std::vector<std::set<int64_t>> out(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<std::pair<double, int64_t>> sims;
    for (int64_t o = 0; o < rows; ++o)
      if (o != r) sims.emplace_back(-cosine(t.values.data() + r * width, t.values.data() + o * width, width), o);
    size_t kk = std::min<size_t>(static_cast<size_t>(k), sims.size());
    std::partial_sort(sims.begin(), sims.begin() + static_cast<long>(kk), sims.end());
    for (size_t i = 0; i < kk; ++i) out[static_cast<size_t>(r)].insert(sims[i].second);
  }
  return out;
}

}  // namespace

Comparison compare(const Criterion& c, const Tensor& e, const Tensor& a, const std::vector<std::string>& ids) {
  Comparison out;
  int64_t rows = e.shape.empty() ? 1 : e.shape[0];
  int64_t width = rows ? e.elements() / std::max<int64_t>(rows, 1) : 0;
  out.samples = rows;
  std::vector<SampleValue> per;
  std::vector<std::set<int64_t>> nnE, nnA;
  if (c.kind == "knn") nnE = nearest(e, rows, width, c.k), nnA = nearest(a, rows, width, c.k);
  for (int64_t r = 0; r < rows; ++r) {
    const double* x = e.values.data() + r * width;
    const double* y = a.values.data() + r * width;
    double v = 0;
    if (c.kind == "exact" || c.kind == "abs") {
      for (int64_t i = 0; i < width; ++i) v = std::max(v, std::fabs(x[i] - y[i]));
    } else if (c.kind == "rel") {
      for (int64_t i = 0; i < width; ++i) v = std::max(v, std::fabs(x[i] - y[i]) / std::max(std::fabs(x[i]), 1e-12));
    } else if (c.kind == "cosine") {
      v = cosine(x, y, width);
    } else if (c.kind == "topk") {
      int k = static_cast<int>(std::min<int64_t>(c.k, width));
      auto top = [&](const double* row) {
        std::vector<int64_t> idx(static_cast<size_t>(width));
        std::iota(idx.begin(), idx.end(), 0);
        std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                          [&](int64_t p, int64_t q) { return row[p] > row[q] || (row[p] == row[q] && p < q); });
        return std::set<int64_t>(idx.begin(), idx.begin() + k);
      };
      auto tx = top(x), ty = top(y);
      int common = 0;
      for (auto i : tx) common += ty.count(i) ? 1 : 0;
      v = k ? static_cast<double>(common) / k : 1;
    } else {  // knn
      const auto& ne = nnE[static_cast<size_t>(r)];
      const auto& na = nnA[static_cast<size_t>(r)];
      int common = 0;
      for (auto i : ne) common += na.count(i) ? 1 : 0;
      v = ne.empty() ? 1 : static_cast<double>(common) / static_cast<double>(ne.size());
    }
    per.push_back({r < static_cast<int64_t>(ids.size()) ? ids[static_cast<size_t>(r)] : "#" + std::to_string(r), v});
  }
  bool higher = c.higherIsBetter();
  auto worse = [&](const SampleValue& p, const SampleValue& q) {
    return higher ? p.value < q.value : p.value > q.value;
  };
  std::stable_sort(per.begin(), per.end(), worse);
  double extreme = per.empty() ? (higher ? 1 : 0) : per.front().value;
  double mean = 0;
  for (const auto& s : per) mean += s.value;
  mean = per.empty() ? 1 : mean / static_cast<double>(per.size());
  auto beyond = [&](double v) {
    if (c.kind == "exact") return v != 0;
    if (higher) return v < c.threshold;
    return v > c.threshold;
  };
  if (c.kind == "topk" || c.kind == "knn") {
    out.measure = mean;
    out.pass = mean >= c.threshold;
  } else {
    out.measure = extreme;
    out.pass = !beyond(extreme);
  }
  for (const auto& s : per) out.beyond += beyond(s.value) ? 1 : 0;
  for (const auto& s : per) {
    if (out.worst.size() >= 10) break;
    if (!out.pass && !beyond(s.value)) break;
    out.worst.push_back(s);
  }
  std::string cmp = out.pass ? (higher ? " >= " : " <= ") : (higher ? " < " : " > ");
  double threshold = c.kind == "exact" ? 0 : c.threshold;
  out.summary = c.str() + ": " + c.measureName() + " " + formatAgainst(out.measure, threshold, c.digits()) + cmp +
                (c.kind == "exact" ? std::string("0") : c.thresholdText) + " over " + std::to_string(rows) +
                " sample(s)";
  if (out.beyond) out.summary += ", " + std::to_string(out.beyond) + " beyond";
  return out;
}

}  // namespace kernodeck::record
