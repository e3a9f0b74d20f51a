// The pure parts of `resume check --cmd`: the command split and its placeholders (hostile
// inputs included), the weights comparison and what a checkpoint is said to hold.
#include <gtest/gtest.h>

#include <cmath>

#include "kernodeck/record/command_template.h"
#include "kernodeck/record/resume_check.h"
#include "kernodeck/record/resume_locate.h"
#include "kernodeck/util/process.h"

namespace record_resume_check_test {

using namespace kernodeck;
using namespace kernodeck::record;

namespace {

using Words = std::vector<std::string>;

}  // namespace

TEST(CommandTemplate, SplitsLikeAShellWithoutExpanding) {
  struct Case {
    const char* text;
    Words words;
  } cases[] = {
      {"python3 train.py --steps 3", {"python3", "train.py", "--steps", "3"}},
      {"  a\t b \n c  ", {"a", "b", "c"}},
      {"a 'b c' \"d e\"", {"a", "b c", "d e"}},
      {"a '' \"\" b", {"a", "", "", "b"}},
      {"a'b'\"c\"d", {"abcd"}},
      {R"(a 'it''s' b)", {"a", "its", "b"}},
      {R"('$HOME' "x\$y" '*.py' 'a|b' "a;b" "~x" '#c')", {"$HOME", "x$y", "*.py", "a|b", "a;b", "~x", "#c"}},
      {R"(a\ b c\"d \\e)", {"a b", "c\"d", "\\e"}},
      {R"("say \"hi\" \\ \n")", {"say \"hi\" \\ \\n"}},
      {"a \\\nb", {"a", "b"}},
      {"x=~ a#b", {"x=~", "a#b"}},  // ~ and # only mean something at the start of a word
      {"--resume={resume} --out {out}", {"--resume={resume}", "--out", "{out}"}},
      {"caf\xc3\xa9 \xff", {"caf\xc3\xa9", "\xff"}},
  };
  for (const auto& c : cases) {
    auto w = splitCommandWords(c.text);
    ASSERT_TRUE(w.ok()) << c.text << ": " << w.error().message;
    EXPECT_EQ(*w, c.words) << c.text;
    // What `resume check` prints as the command (util::quoteCommand) splits back into the same words.
    auto back = splitCommandWords(util::quoteCommand(*w));
    ASSERT_TRUE(back.ok()) << util::quoteCommand(*w) << ": " << back.error().message;
    EXPECT_EQ(*back, c.words) << util::quoteCommand(*w);
  }
}

TEST(CommandTemplate, RefusesWhatOnlyAShellWouldDo) {
  struct Case {
    std::string text, says;
  } cases[] = {
      {"python3 train.py | tee log", "'|' at character 18"},
      {"a; rm -rf /", "';'"},
      {"a && b", "'&'"},
      {"a > out.txt", "'>'"},
      {"a < in", "'<'"},
      {"$(id)", "'$'"},
      {"a $HOME/x", "'$'"},
      {"a `id`", "'`'"},
      {"a \"$HOME\"", "inside \"...\""},
      {"a \"`id`\"", "inside \"...\""},
      {"a *.py", "glob"},
      {"a file?", "glob"},
      {"~/train.py", "home folder"},
      {"a #comment", "comment"},
      {"(a)", "'('"},
      {"a 'unterminated", "unterminated '"},
      {"a \"unterminated", "unterminated \""},
      {"a \\", "lone backslash"},
      {"", "empty"},
      {" \t\n", "empty"},
      {std::string("a\0b", 3), "NUL"},
      {std::string("'a\0b'", 5), "NUL"},
      {std::string("\"a\0b\"", 5), "NUL"},
  };
  for (const auto& c : cases) {
    auto w = splitCommandWords(c.text);
    ASSERT_FALSE(w.ok()) << c.text;
    EXPECT_NE(w.error().message.find(c.says), std::string::npos) << c.text << ": " << w.error().message;
  }
}

TEST(CommandTemplate, PlaceholdersAreReplacedInsideWordsAfterTheSplit) {
  const Words names = resumePlaceholders();
  std::map<std::string, std::string> values = {{"steps", "12"},
                                               {"save_at", "5"},
                                               {"checkpoint", "/w/c/checkpoint.pt"},
                                               {"resume", ""},
                                               {"out", "/w/out dir; rm -rf ~ $(id) 'q'"},
                                               {"run", "straight"}};
  struct Case {
    const char* text;
    Words argv;
  } cases[] = {
      {"t --steps {steps} --at={save_at}", {"t", "--steps", "12", "--at=5"}},
      // A value with blanks, quotes and shell syntax stays one argument, as it is.
      {"t --out {out}", {"t", "--out", "/w/out dir; rm -rf ~ $(id) 'q'"}},
      {"t '{out}'", {"t", "/w/out dir; rm -rf ~ $(id) 'q'"}},
      // {resume} is empty outside the resumed run: the argument stays, empty.
      {"t --resume {resume} --resume={resume}", {"t", "--resume", "", "--resume="}},
      {"t {run}-{steps}/{{literal}} x}}y", {"t", "straight-12/{literal}", "x}y"}},
      {"t '{{\"a\": 1}}'", {"t", "{\"a\": 1}"}},
      {"t {steps}{steps}", {"t", "1212"}},
  };
  for (const auto& c : cases) {
    auto t = CommandTemplate::parse(c.text, names);
    ASSERT_TRUE(t.ok()) << c.text << ": " << t.error().message;
    EXPECT_EQ(t->expand(values), c.argv) << c.text;
  }
  auto t = CommandTemplate::parse("t {out} {steps} {out}", names);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->placeholders(), (Words{"out", "steps"}));
  // Words given after `--` are not split again.
  auto w = CommandTemplate::fromWords({"python3", "my script.py", "--n", "{steps}", "a b"}, names);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->expand(values), (Words{"python3", "my script.py", "--n", "12", "a b"}));
}

TEST(CommandTemplate, RefusesBadPlaceholders) {
  const Words names = resumePlaceholders();
  struct Case {
    Words words;
    std::string says;
  } cases[] = {
      {{"t", "{step}"}, "unknown placeholder {step} (known: {steps}, {save_at}"},
      {{"t", "{STEPS}"}, "unknown placeholder {STEPS}"},
      {{"t", "{}"}, "unknown placeholder {}"},
      {{"t", "{a{steps}}"}, "unknown placeholder {a{steps}"},
      {{"t", "{steps"}, "unclosed '{'"},
      {{"t", "x}"}, "lone '}'"},
      {{"t", "{\"a\": 1}"}, "unknown placeholder"},
      {{}, "empty"},
      {{"", "x"}, "no program"},
  };
  for (const auto& c : cases) {
    auto t = CommandTemplate::fromWords(c.words, names);
    ASSERT_FALSE(t.ok()) << ::testing::PrintToString(c.words);
    EXPECT_NE(t.error().message.find(c.says), std::string::npos) << t.error().message;
  }
}

TEST(ResumeCheck, WeightsComparedTensorByTensor) {
  auto parse = [](const char* s) { return *parseCriterion(s); };
  std::vector<Tensor> a = {{"fc.weight", "float32", {2, 2}, {1, 2, 3, 4}}, {"fc.bias", "float32", {2}, {0.5, -0.5}}};
  auto b = a;
  WeightsComparison same = compareWeights(parse("exact"), a, b);
  EXPECT_TRUE(same.pass);
  EXPECT_EQ(same.tensors, 2);
  EXPECT_EQ(same.summary, "exact: max abs error 0 <= 0 over 2 tensor(s)");
  b[0].values[3] = 4.001;
  WeightsComparison off = compareWeights(parse("exact"), a, b);
  EXPECT_FALSE(off.pass);
  EXPECT_EQ(off.beyond, 1);
  ASSERT_FALSE(off.worst.empty());
  EXPECT_EQ(off.worst[0].id, "fc.weight");
  EXPECT_NE(off.summary.find("max abs error 0.001 > 0 over 2 tensor(s), 1 beyond (worst: fc.weight 0.001"),
            std::string::npos)
      << off.summary;
  EXPECT_TRUE(compareWeights(parse("abs<=0.01"), a, b).pass);
  EXPECT_NE(compareWeights(parse("abs<=0.01"), a, b).summary.find("0.001 <= 0.01"), std::string::npos);
  EXPECT_FALSE(compareWeights(parse("abs<=1e-4"), a, b).pass);
  EXPECT_TRUE(compareWeights(parse("cosine>=0.999"), a, b).pass);
  EXPECT_TRUE(compareWeights(parse("rel<=1e-3"), a, b).pass);
  // Structure: a missing or extra tensor, another shape, another dtype.
  auto missing = a;
  missing.pop_back();
  EXPECT_FALSE(compareWeights(parse("abs<=1"), a, missing).pass);
  EXPECT_NE(compareWeights(parse("abs<=1"), a, missing).summary.find("fc.bias is missing"), std::string::npos);
  EXPECT_NE(compareWeights(parse("abs<=1"), missing, a).summary.find("fc.bias is only in the resumed"),
            std::string::npos);
  auto shape = a;
  shape[0].shape = {4};
  EXPECT_FALSE(compareWeights(parse("abs<=1"), a, shape).pass);
  auto dtype = a;
  dtype[1].dtype = "float64";
  WeightsComparison dt = compareWeights(parse("abs<=1"), a, dtype);
  EXPECT_FALSE(dt.pass);
  EXPECT_NE(dt.summary.find("float32 in one run and float64"), std::string::npos) << dt.summary;
  // NaN where the other run has a number fails; the same NaN on both sides is equal.
  auto nan = a;
  nan[1].values[0] = std::nan("");
  EXPECT_FALSE(compareWeights(parse("abs<=1"), a, nan).pass);
  EXPECT_NE(compareWeights(parse("abs<=1"), a, nan).summary.find("NaN/Inf"), std::string::npos);
  EXPECT_TRUE(compareWeights(parse("exact"), nan, nan).pass);
  auto inf = a;
  inf[1].values[1] = INFINITY;
  EXPECT_FALSE(compareWeights(parse("abs<=1e9"), a, inf).pass);
  // No tensor at all is not a pass.
  EXPECT_FALSE(compareWeights(parse("exact"), {}, {}).pass);
}

TEST(ResumeCheck, CheckpointStateFromInspectAndTheDataOrderKeys) {
  report::Report inspected("resume inspect");
  inspected.declareSteps({"read"});
  ASSERT_TRUE(inspected.runStep("read", [] { return kernodeck::Status(); }));
  inspected.section("checkpoint") = {{"format", "torch.save"},
                                     {"keys", {"model", "scheduler", "step", "torch_rng"}},
                                     {"present", {"model", "RNG state", "step counter", "LR scheduler"}},
                                     {"missing", {"optimizer state"}}};
  // torch.save's pickle (protocol 2) names the key with BINUNICODE: 'X', a 4-byte length, the bytes.
  std::string pickle = std::string("\x80\x02}q\x00(X\x08\x00\x00\x00", 11) + "data_rngq";
  CheckpointState s = assessCheckpoint(&inspected, pickle);
  EXPECT_TRUE(s.inspected);
  EXPECT_EQ(s.held, (Words{"model", "RNG state", "step counter", "LR scheduler", "data order"}));
  EXPECT_EQ(s.absent, (Words{"optimizer state"}));
  EXPECT_NE(std::find(s.keys.begin(), s.keys.end(), "data_rng"), s.keys.end());
  // The name as a bare substring (not a pickled string) is not a key.
  EXPECT_EQ(assessCheckpoint(&inspected, "xx data_rng sampler").absent, (Words{"optimizer state", "data order"}));
  // SHORT_BINUNICODE (protocol 4).
  EXPECT_EQ(assessCheckpoint(&inspected, std::string("\x8c\x07sampler", 9)).absent, (Words{"optimizer state"}));
  // A reader that failed: nothing is known, and the reason is kept.
  report::Report failed("resume inspect");
  failed.declareSteps({"read"});
  EXPECT_FALSE(failed.runStep("read", [] {
    return kernodeck::Status(kernodeck::Error::Invalid("x.pt is not a checkpoint Kernodeck can read"));
  }));
  CheckpointState f = assessCheckpoint(&failed, "");
  EXPECT_FALSE(f.inspected);
  EXPECT_NE(f.why.find("not a checkpoint"), std::string::npos);
  EXPECT_EQ(f.held, Words{});
  EXPECT_EQ(f.absent, Words{});
  // Unread, a data order key is still seen in the bytes.
  EXPECT_EQ(assessCheckpoint(nullptr, std::string("\x8c\x0a"
                                                  "epoch_perm",
                                                  12))
                .held,
            Words{"data order"});
}

// What a diverged resume is blamed on: state the checkpoint holds but the resumed run did not
// restore (shown by the probes), told apart from state it lacks; an LR scheduler or a data
// order only when nothing else explains the difference.
TEST(ResumeLocate, BlamesWhatTheProbesShow) {
  CheckpointState all;
  all.inspected = true;
  all.held = {"model", "optimizer state", "RNG state", "step counter"};
  all.absent = {"LR scheduler", "data order"};
  CheckpointState noOptimizer = all;
  noOptimizer.held = {"model", "RNG state", "step counter"};
  noOptimizer.absent = {"optimizer state", "LR scheduler", "data order"};
  CheckpointState unread;
  unread.why = "no checkpoint reader";
  ResumeLocation modelLost{true, false, true, true, false, {}};
  ResumeLocation optimizerLost{true, true, true, true, true, {"model", "optimizer state"}};
  ResumeLocation firstDiffers{true, true, true, true, true, {"model"}};
  ResumeLocation laterOnly{true, true, true, false, true, {}};
  ResumeLocation unknown;
  struct Case {
    const CheckpointState& state;
    const ResumeLocation& where;
    std::string says;
    std::vector<std::string> never;
  } cases[] = {
      {all,
       modelLost,
       "the checkpoint holds the model, but the resumed run did not restore it: stopped at step 5",
       {"optimizer", "LR scheduler"}},
      {unread, modelLost, "the resumed run did not restore the model", {"cannot be told"}},
      {all,
       optimizerLost,
       "the checkpoint holds optimizer state, but the resumed run did not restore it: one step after",
       {"LR scheduler", "data order", "holds no"}},
      {unread, optimizerLost, "the checkpoint holds optimizer state, but the resumed run did not restore it", {}},
      {noOptimizer,
       firstDiffers,
       "the checkpoint holds no optimizer state, so the resumed run restarts the optimizer",
       {"LR scheduler", "data order"}},
      {noOptimizer, unknown, "the checkpoint holds no optimizer state", {"LR scheduler", "data order"}},
      {all,
       laterOnly,
       "the first step after resuming matches, and the runs part later; the checkpoint holds no LR scheduler, no data "
       "order (needed if the training uses them)",
       {}},
      {unread, unknown, "which state the checkpoint lacks cannot be told (no checkpoint reader)", {}},
  };
  for (const auto& c : cases) {
    std::string s = explainResume(c.state, c.where, 5);
    EXPECT_NE(s.find(c.says), std::string::npos) << s;
    for (const auto& n : c.never) EXPECT_EQ(s.find(n), std::string::npos) << n << ": " << s;
  }
  EXPECT_EQ(pieceOfKey("optimizer_state_dict"), "optimizer state");
  EXPECT_EQ(pieceOfKey("epoch_perm"), "data order");
  EXPECT_EQ(pieceOfKey("encoder"), "");
}

}  // namespace record_resume_check_test
