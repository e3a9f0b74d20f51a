#!/usr/bin/env python3
"""Errors are kinds, not strings (issue 32 section 4).

An Error carries an ErrorKind (include/kernodeck/util/result.h); a caller branches with
`e.is(ErrorKind::NotFound)`, adds where it happened with `e.context(what)`, and an exit code
comes from report::exitCodeOf alone. This check reads src/ and include/ (comments skipped,
string literals kept) and fails on:
  - an Error made from a string literal: `Error{"auth", ...}` or `Error("auth", ...)`;
  - the old string code read from an error: `.error().code`, `error->code`, `e.code == "..."`;
  - a kind's name compared as a string: `kindName()` or `errorKindName(...)` beside `==`, `!=`,
    strcmp, compare, find or starts_with.

usage: error_kinds.py SOURCE_DIR [--self-test]
Exit 1 with one line per offence (path:line: what). --self-test first checks that each rule
reports a line written the old way and passes one written the new way.
"""
import os
import re
import sys

import cxx_text

RULES = [
    ('an Error made from a string literal (use a factory: Error::Auth(...), or Error(ErrorKind::..., msg))',
     re.compile(r'\bError\s*[{(]\s*"')),
    ('an error code read as a string (use e.is(ErrorKind::...))',
     re.compile(r'(\berror\(\)|\berror\b|\berr\b|\be\b)\s*(\.|->)\s*code\b(?!\s*\()')),
    ('an error kind compared by its name (use e.is(ErrorKind::...))',
     re.compile(r'(kindName|errorKindName)\s*\(.*(==|!=|strcmp|compare|starts_with|\.find\b)'
                r'|(==|!=|strcmp\s*\(|compare\s*\()\s*[^;]*(kindName|errorKindName)\s*\(')),
]


def strip_comments(text):
    """The text with // and /* */ comments blanked; string and character literals kept."""
    return cxx_text.blank(text, literals=False)


def offences(text):
    """(line number, rule) for each line of C++ `text` that breaks a rule."""
    found = []
    for no, line in enumerate(strip_comments(text).split('\n'), 1):
        for what, rx in RULES:
            if rx.search(line):
                found.append((no, what))
    return found


def self_test():
    """Each rule catches the old way and passes the new; returns a list of failures."""
    bad = [
        'return Error{"auth", where("") + ": no token"};',
        'return Error("timeout", "too slow");',
        'if (s.error().code == "not_found") return {};',
        'else if (put.error().code != "invalid" || attempt >= 4)',
        'if (scan.error) return Error{scan.error->code, "layer: " + scan.error->message};',
        'return e.code == "invalid" ? 2 : 3;',
        'if (std::string(e.kindName()) == "not_found") return {};',
        'if (std::strcmp(errorKindName(k), "io") == 0) return 3;',
    ]
    good = [
        'return Error::Auth(where("") + ": no token");',
        'if (s.error().is(ErrorKind::NotFound)) return {};',
        'return scan.error->context("layer " + what);',
        'return Error(manifest.error().kind, dir + "/" + manifest.error().message);',
        'if (f.code == code) return &d;  // a finding code, not an error',
        '// Error{"auth", ...} in a comment is history, not code',
        'std::fprintf(stderr, "%s: %s\\n", e.kindName(), e.message.c_str());',
        'if (ref.code.repo.empty()) return {};',
    ]
    failures = []
    for line in bad:
        if not offences(line):
            failures.append('self-test: not reported: ' + line)
    for line in good:
        if offences(line):
            failures.append('self-test: reported but fine: ' + line)
    return failures


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    root = argv[1]
    failures = self_test() if '--self-test' in argv else []
    for top in ('src', 'include'):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith(('.cc', '.h')):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding='utf-8', errors='replace') as f:
                    text = f.read()
                for no, what in offences(text):
                    failures.append(f'{os.path.relpath(path, root)}:{no}: {what}')
    for line in failures:
        print(line)
    if failures:
        return 1
    print('ok: errors are made and compared by kind only')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
