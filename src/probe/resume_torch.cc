// See resume.h. LibTorch is used here and in torch_compute.cc only.
#include <ATen/CPUGeneratorImpl.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/torch.h>
#include <unistd.h>
#include <cstdint>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "kernodeck/libtorch/abi.h"
#include "kernodeck/libtorch/pickle_strings.h"
#include "kernodeck/probe/resume.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/process.h"
#include "kernodeck/util/safe_file.h"

namespace kernodeck::probe::torchimpl {

using nlohmann::json;

namespace {

constexpr double kLr = 0.1, kGamma = 0.5;
constexpr int kStepSize = 5;

struct Net : torch::nn::Module {
  Net() {
    fc1 = register_module("fc1", torch::nn::Linear(8, 16));
    drop = register_module("drop", torch::nn::Dropout(0.1));
    fc2 = register_module("fc2", torch::nn::Linear(16, 1));
  }
  torch::Tensor forward(torch::Tensor x) { return fc2->forward(drop->forward(torch::relu(fc1->forward(x)))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  torch::nn::Dropout drop{nullptr};
};

struct Trainer {
  std::shared_ptr<Net> net;
  std::unique_ptr<torch::optim::SGD> opt;
  int step = 0;

  explicit Trainer(unsigned seed) {
    torch::manual_seed(seed);
    net = std::make_shared<Net>();
    opt = std::make_unique<torch::optim::SGD>(net->parameters(), torch::optim::SGDOptions(kLr).momentum(0.9));
  }
  double lr() const { return kLr * std::pow(kGamma, step / kStepSize); }
  double trainStep() {
    for (auto& g : opt->param_groups()) static_cast<torch::optim::SGDOptions&>(g.options()).lr(lr());
    net->train();
    auto x = torch::randn({16, 8});
    auto y = x.sum(1, true) * 0.5;
    opt->zero_grad();
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    opt->step();
    ++step;
    return loss.item<double>();
  }
  std::vector<double> params() const {
    std::vector<double> out;
    for (const auto& p : net->parameters()) {
      auto d = p.detach().to(torch::kDouble).contiguous();
      out.insert(out.end(), d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
    }
    return out;
  }
};

struct Pieces {
  bool optimizer = true, rng = true, step = true;
};

void save(Trainer& t, const std::string& path, const Pieces& p) {
  torch::serialize::OutputArchive a;
  torch::serialize::OutputArchive model;
  t.net->save(model);
  a.write("model", model);
  if (p.optimizer) {
    torch::serialize::OutputArchive opt;
    t.opt->save(opt);
    a.write("optimizer", opt);
  }
  if (p.rng) a.write("rng_state", at::detail::getDefaultCPUGenerator().get_state());  // NOLINT
  if (p.step) a.write("step", torch::tensor(static_cast<int64_t>(t.step)));
  a.save_to(path);
}

// Largest difference over the common prefix (a run that lost its step counter trains longer).
double maxDiff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return a.empty() != b.empty() ? INFINITY : m;
}

struct Continued {
  bool ok = false;
  std::vector<double> losses, params;
  std::string error;
};

Continued continueInFreshProcess(const std::string& self, const std::string& ckpt, int steps, unsigned seed,
                                 const std::string& out) {
  Continued c;
  util::ProcessSpec spec;
  spec.argv = {self, "resume", "_continue", ckpt, std::to_string(steps), std::to_string(seed), out};
  spec.timeoutMs = 10u * 60 * 1000;
  auto pr = util::runProcess(spec);
  if (!pr.ok() || !pr->ok()) {
    c.error = pr.ok() ? "the fresh process " + pr->describe() + (pr->lastLine().empty() ? "" : ": " + pr->lastLine())
                      : pr.error().message;
    return c;
  }
  auto text = util::readFileLimited(out, 16u << 20);
  json j = text.ok() ? json::parse(*text, nullptr, false) : json();
  if (!j.is_object()) {
    c.error = "the fresh process wrote no result";
    return c;
  }
  util::JsonReader jr(j);
  if (auto st = jr.get("losses", c.losses); !st.ok()) {
    c.error = "the fresh process wrote a bad result: " + st.error().message;
    return c;
  }
  if (auto st = jr.get("params", c.params); !st.ok()) {
    c.error = "the fresh process wrote a bad result: " + st.error().message;
    return c;
  }
  c.ok = true;
  return c;
}

// The key names Kernodeck recognises in a checkpoint (model, optimizer, RNG, step, scheduler).
const std::vector<std::string> kKnownKeys = {"model",
                                             "model_state_dict",
                                             "state_dict",
                                             "net",
                                             "optimizer",
                                             "optimizer_state_dict",
                                             "optim",
                                             "rng_state",
                                             "rng",
                                             "torch_rng_state",
                                             "torch_rng",
                                             "cuda_rng_state",
                                             "cuda_rng",
                                             "numpy_rng",
                                             "numpy_rng_state",
                                             "np_rng",
                                             "py_rng",
                                             "python_rng",
                                             "python_rng_state",
                                             "random_state",
                                             "rng_states",
                                             "step",
                                             "global_step",
                                             "epoch",
                                             "iteration",
                                             "scheduler",
                                             "lr_scheduler",
                                             "scheduler_state_dict"};

// A parameter or buffer name of an nn.Module state_dict ("fc1.weight", "bias").
bool looksLikeParameter(const std::string& k) {
  for (const char* p : {"weight", "bias", "running_mean", "running_var"})
    if (k == p || k.ends_with(std::string(".") + p)) return true;
  return false;
}

// LibTorch's unpickler cannot rebuild some Python objects (an nn.Module state_dict is an
// OrderedDict carrying _metadata). Then the pickle inside the zip is scanned for the string keys
// a resume needs, and "(parameters)" stands for parameter names ("fc1.weight").
std::set<std::string> scanPickleKeys(const std::string& path, const std::vector<std::string>& names) {
  std::set<std::string> found;
  try {
    caffe2::serialize::PyTorchStreamReader zip(path);  // LibTorch's own reader of the zip
    auto [data, size] = zip.getRecord("data.pkl");
    libtorch::forEachPickleString(std::string_view(static_cast<const char*>(data.get()), size),
                                  [&](std::string_view s) {
                                    if (looksLikeParameter(std::string(s))) found.insert("(parameters)");
                                    if (std::find(names.begin(), names.end(), s) != names.end()) found.emplace(s);
                                  });
  } catch (const std::exception&) {
    // Not a zip LibTorch can read: nothing found.
  }
  return found;
}

}  // namespace

int resumeContinue(const std::string& checkpoint, int steps, unsigned seed, const std::string& out) {
  try {
    Trainer t(seed);  // same construction as the original run, then the checkpoint overrides it
    torch::serialize::InputArchive a;
    a.load_from(checkpoint);
    torch::serialize::InputArchive model;
    a.read("model", model);
    t.net->load(model);
    torch::serialize::InputArchive opt;
    if (a.try_read("optimizer", opt)) t.opt->load(opt);
    torch::Tensor rng;
    if (a.try_read("rng_state", rng)) {
      at::Generator gen = at::detail::getDefaultCPUGenerator();
      gen.set_state(rng);
    }
    torch::Tensor step;
    if (a.try_read("step", step)) t.step = static_cast<int>(step.item<int64_t>());
    std::vector<double> losses;
    while (t.step < steps) losses.push_back(t.trainStep());
    json j = {{"losses", losses}, {"params", t.params()}};
    return util::writeFileAtomic(out, j.dump()).ok() ? 0 : 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernodeck resume: %s\n", e.what());
    return 3;
  }
}

report::Report resumeCheck(const ResumeOptions& o) {
  report::Report r("resume check");
  r.declareSteps({"straight", "resumed", "compare", "ablation"});
  r.subject()["reference"] = "resume check";
  r.subject()["steps"] = o.steps;
  r.subject()["checkpoint_at"] = o.at;
  r.subject()["atol"] = o.atol;
  std::vector<double> losses;
  std::vector<double> params;
  char tmpl[] = "/tmp/kernodeck-resume-XXXXXX";
  std::string dir = ::mkdtemp(tmpl) ? tmpl : "/tmp";
  auto run = [&](const Pieces& p, const std::string& tag) -> Continued {
    Trainer t(o.seed);
    std::vector<double> first;
    for (int i = 0; i < o.at; ++i) first.push_back(t.trainStep());
    std::string ckpt = dir + "/" + tag + ".pt";
    save(t, ckpt, p);
    Continued c = continueInFreshProcess(o.self, ckpt, o.steps, o.seed, dir + "/" + tag + ".json");
    c.losses.insert(c.losses.begin(), first.begin(), first.end());
    return c;
  };
  r.runStep("straight", [&]() -> Status {
    if (o.at <= 0 || o.at >= o.steps) return Error::Invalid("the checkpoint step must be between 1 and steps-1");
    Trainer t(o.seed);
    for (int i = 0; i < o.steps; ++i) losses.push_back(t.trainStep());
    params = t.params();
    return {};
  });
  Continued full;
  r.runStep("resumed", [&]() -> Status {
    full = run(Pieces{}, "full");
    if (!full.ok) return Error::Io("resume in a fresh process failed: " + full.error);
    return {};
  });
  r.runStep("compare", [&]() -> Status {
    double dl = losses.size() == full.losses.size() ? maxDiff(losses, full.losses) : INFINITY;
    double dp = maxDiff(params, full.params);
    r.section("resume") = {
        {"straight_losses", losses}, {"resumed_losses", full.losses}, {"max_loss_diff", dl}, {"max_param_diff", dp}};
    if (dl > o.atol || dp > o.atol) {
      r.add("resume.diverged", report::Severity::Error,
            "the resumed run differs from the straight run: loss by " + std::to_string(dl) + ", parameters by " +
                std::to_string(dp));
      return Error::Invalid("the resumed trajectory does not match the straight one within atol " +
                            std::to_string(o.atol));
    }
    return {};
  });
  r.runStep("ablation", [&]() -> Status {
    json rows = json::array();
    struct Variant {
      const char* piece;
      Pieces p;
    } variants[] = {{"optimizer state", {false, true, true}},
                    {"RNG state", {true, false, true}},
                    {"step counter and LR schedule", {true, true, false}}};
    for (const auto& v : variants) {
      Continued c = run(v.p, std::string(v.piece).substr(0, 3));
      if (!c.ok) return Error::Io(std::string("the variant without ") + v.piece + " failed: " + c.error);
      double dl = maxDiff(losses, c.losses);
      int firstDiff = -1;
      for (size_t i = 0; i < losses.size() && i < c.losses.size(); ++i)
        if (std::fabs(losses[i] - c.losses[i]) > o.atol) {
          firstDiff = static_cast<int>(i);
          break;
        }
      rows.push_back({{"without", v.piece}, {"max_loss_diff", dl}, {"first_divergent_step", firstDiff}});
      r.add("resume.requires", report::Severity::Info,
            std::string("leaving out the ") + v.piece +
                (dl > o.atol ? " breaks the trajectory from step " + std::to_string(firstDiff) +
                                   " (loss off by up to " + std::to_string(dl) + ")"
                             : " changes nothing in this exercise"),
            {{"piece", v.piece}});
    }
    r.section("ablation") = rows;
    return {};
  });
  (void)util::removeTree(dir);
  return r;
}

report::Report resumeInspect(const std::string& path) {
  report::Report r("resume inspect");
  r.declareSteps({"read", "assess"});
  r.subject()["reference"] = path;
  std::set<std::string> keys;
  std::string format;
  r.runStep("read", [&]() -> Status {
    auto bytes = util::readFileLimited(path, 4ull << 30);
    if (!bytes.ok()) return bytes.error();
    try {  // torch.save of a dict (Python checkpoints)
      std::vector<char> data(bytes->begin(), bytes->end());
      c10::IValue v = torch::pickle_load(data);
      if (v.isGenericDict())
        for (const auto& kv : v.toGenericDict())
          if (kv.key().isString()) keys.insert(kv.key().toStringRef());
      bool known = false, params = false;
      for (const auto& k : keys) {
        known |= std::find(kKnownKeys.begin(), kKnownKeys.end(), k) != kKnownKeys.end();
        params |= looksLikeParameter(k);
      }
      format = !known && params ? "torch.save of a plain state_dict (parameters only)" : "torch.save";
      return {};
    } catch (const std::exception&) {
      // Not a dictionary LibTorch's unpickler can rebuild: scanned below.
    }
    keys = scanPickleKeys(path, kKnownKeys);
    if (keys.count("(parameters)") && keys.size() == 1) {
      format = "torch.save of a plain state_dict (parameters only)";
      return {};
    }
    keys.erase("(parameters)");
    if (!keys.empty()) {
      format = "torch.save (keys found by scanning the pickle: LibTorch cannot rebuild it)";
      return {};
    }
    try {  // LibTorch's own archives (what kernodeck resume writes)
      torch::serialize::InputArchive a;
      a.load_from(path);
      for (const auto& k : a.keys()) keys.insert(k.substr(0, k.find('.')));
      format = "libtorch archive";
      return {};
    } catch (const std::exception& e) {
      // LibTorch's own messages (assertions, file names inside the archive) mean nothing to a user.
      return Error::Invalid(
          path + " is not a checkpoint Kernodeck can read: neither a torch.save dictionary nor a LibTorch archive");
    }
  });
  r.runStep("assess", [&]() -> Status {
    struct Need {
      const char* piece;
      std::vector<const char*> names;
    } needs[] = {
        {"model", {"model", "model_state_dict", "state_dict", "net", "(parameters)"}},
        {"optimizer state", {"optimizer", "optimizer_state_dict", "optim"}},
        {"RNG state",
         {"rng_state", "rng", "torch_rng_state", "torch_rng", "cuda_rng_state", "cuda_rng", "numpy_rng",
          "numpy_rng_state", "np_rng", "py_rng", "python_rng", "python_rng_state", "random_state", "rng_states"}},
        {"step counter", {"step", "global_step", "epoch", "iteration"}},
        {"LR scheduler", {"scheduler", "lr_scheduler", "scheduler_state_dict"}}};
    if (format.find("plain state_dict") != std::string::npos) keys.insert("(parameters)");
    json present = json::array(), missing = json::array();
    for (const auto& n : needs) {
      bool found = false;
      for (const char* k : n.names) found |= keys.count(k) > 0;
      (found ? present : missing).push_back(n.piece);
      // A scheduler matters only to a training that uses one: said, not warned about.
      bool scheduler = std::string(n.piece) == "LR scheduler";
      if (!found)
        r.add("resume.checkpoint.missing",
              std::string(n.piece) == "model" ? report::Severity::Error
              : scheduler                     ? report::Severity::Info
                                              : report::Severity::Warning,
              std::string("the checkpoint holds no ") + n.piece +
                  (scheduler ? ": a training that uses an LR scheduler will not resume its schedule"
                             : ": a resume will not continue the same trajectory"),
              {{"piece", n.piece}});
    }
    r.section("checkpoint") = {{"format", format}, {"keys", keys}, {"present", present}, {"missing", missing}};
    return {};
  });
  return r;
}

}  // namespace kernodeck::probe::torchimpl

// The plugin's entry points for resume (see libtorch/abi.h).
namespace kernodeck::libtorch::entry {

void resumeCheck(const ResumeArgs* args, report::Report* out) {
  probe::ResumeOptions o;
  o.steps = args->steps;
  o.at = args->at;
  o.atol = args->atol;
  o.seed = args->seed;
  o.self = args->self;
  *out = probe::torchimpl::resumeCheck(o);
}

void resumeInspect(const char* checkpoint, report::Report* out) { *out = probe::torchimpl::resumeInspect(checkpoint); }

int resumeContinue(const char* checkpoint, int steps, unsigned seed, const char* out) {
  return probe::torchimpl::resumeContinue(checkpoint, steps, seed, out);
}

}  // namespace kernodeck::libtorch::entry
