// A user's command line with placeholders, run without a shell (`resume check --cmd`).
//
// The text is split into words as a POSIX shell splits them (blanks separate words; '...'
// keeps everything; "..." keeps everything but \" \\ \$ \` and backslash-newline; a
// backslash outside quotes escapes the next character) and nothing else: no variable,
// command, tilde or glob expansion, no redirection, no pipes. Anything a user would expect a
// shell to do is refused with a message naming it, rather than passed on literally and
// failing in a confusing way later. Placeholders ({steps}, {out}...) are replaced after the
// split, inside each word, so a value with blanks or quotes in it stays one argument and is
// never read as syntax. `{{` and `}}` are literal braces. Pure functions, no I/O.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::record {

// Splits `text` into words as described above. Errors: an unterminated quote, an unquoted
// shell operator (| & ; < > ( )), an unquoted $ or backquote (also inside "..."), an unquoted
// glob character (* ?), a ~ or # starting a word, a NUL byte, no word at all.
Result<std::vector<std::string>> splitCommandWords(std::string_view text);

// A command whose words may hold placeholders, checked against the names a caller offers.
class CommandTemplate {
 public:
  // From words (argv given after `--`, or splitCommandWords' output). Errors: no word, an
  // unknown placeholder (the message lists the known ones), an unclosed `{`, a lone `}`.
  static Result<CommandTemplate> fromWords(const std::vector<std::string>& words,
                                           const std::vector<std::string>& names);
  // splitCommandWords, then fromWords.
  static Result<CommandTemplate> parse(std::string_view text, const std::vector<std::string>& names);

  // The argv with every placeholder replaced by its value (a name missing from `values`
  // becomes empty). Cannot fail: the template was checked when it was made.
  std::vector<std::string> expand(const std::map<std::string, std::string>& values) const;
  // The placeholder names the command uses, each once, in order of appearance.
  std::vector<std::string> placeholders() const;

 private:
  struct Piece {
    bool placeholder = false;
    std::string text;  // literal text, or the placeholder's name
  };
  std::vector<std::vector<Piece>> words_;
};

}  // namespace kernodeck::record
