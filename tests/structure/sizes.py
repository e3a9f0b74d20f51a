#!/usr/bin/env python3
"""No file in src/ over 600 lines, no function over 100 (issue 32).

A function is a brace block opened at namespace or class level right after a
parameter list (`) {`, `) const {`, `) -> T {`, a constructor's initialisers);
its length counts from the first line of its signature to its closing brace.
Lambdas and blocks inside a function count towards that function. Comments,
string literals (raw ones too) and character literals are skipped.

usage: sizes.py SOURCE_DIR [--list]
Exit 1 with one line per offender; --list prints every function over 60 lines.
tests/structure/sizes_pending.txt names offenders still being split (`path` or
`path:function`); an entry there that is no longer over is a failure too, so
the list only shrinks.
"""
import os
import re
import sys

import cxx_text

MAX_FILE = 600
MAX_FUNCTION = 100


def strip(text):
    """The text with comments and literals blanked, newlines kept."""
    return cxx_text.blank(text, literals=True)


FUNCTION_TAIL = re.compile(r'\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(final\s*)?(->\s*[\w:<>,\s*&]+)?$')
INIT_LIST = re.compile(r'\)\s*(noexcept\s*)?:\s*[\w:]+\s*[({]')


def functions(text):
    """(first line, last line, name) of each function body at namespace or class level."""
    s = strip(text)
    stack = []  # (kind, start line, name)
    stmt_start = 0
    found = []
    line = 1
    for i, c in enumerate(s):
        if c == '\n':
            line += 1
        elif c in ';':
            stmt_start = i + 1
        elif c == '{':
            head = s[stmt_start:i]
            at_scope = all(k in ('ns', 'class') for k, _, _ in stack)
            stripped = head.strip()
            if re.search(r'\b(namespace|extern\s+"")', stripped) and '(' not in stripped:
                kind = 'ns'
            elif re.match(r'(template\s*<.*>\s*)?(class|struct|union)\b', stripped, re.S) and '(' not in stripped:
                kind = 'class'
            elif at_scope and (FUNCTION_TAIL.search(stripped) or INIT_LIST.search(stripped)) and '=' not in stripped.split('(')[0]:
                kind = 'fn'
            else:
                kind = 'block'
            first = line - s[stmt_start:i].lstrip().count("\n")
            name = ''
            m = re.search(r'([~\w:]+(?:operator\S*)?)\s*\(', stripped)
            if m:
                name = m.group(1)
            stack.append((kind, first, name))
            stmt_start = i + 1
        elif c == '}':
            if stack:
                kind, first, name = stack.pop()
                if kind == 'fn':
                    found.append((first, line, name))
            stmt_start = i + 1
    return found


def self_test():
    """The counter finds what it should, so the check can fail."""
    body = '\n'.join(['  x += 1;'] * 99)
    text = ('namespace a {\nstruct S {\n  int f(int x) const {\n' + body + '\n  }\n};\n'
            'int g(int x,\n      int y) {\n  auto l = [&] {\n' + body + '\n  };\n  return "}{";\n}\n}\n')
    got = {name: last - first + 1 for first, last, name in functions(text)}
    assert got == {'f': 101, 'g': 105}, got


def main():
    self_test()
    root = sys.argv[1]
    listing = '--list' in sys.argv
    problems = []
    over = {}
    pending_path = os.path.join(root, 'tests', 'structure', 'sizes_pending.txt')
    pending = set()
    if os.path.exists(pending_path):
        for l in open(pending_path):
            l = l.split('#')[0].strip()
            if l:
                pending.add(l)
    for base, _, files in sorted(os.walk(os.path.join(root, 'src'))):
        for f in sorted(files):
            if not f.endswith(('.cc', '.h')):
                continue
            path = os.path.join(base, f)
            rel = os.path.relpath(path, root)
            text = open(path, encoding='utf-8').read()
            lines = text.count('\n')
            if lines > MAX_FILE:
                over[rel] = f'{rel}: {lines} lines (at most {MAX_FILE})'
            for first, last, name in functions(text):
                length = last - first + 1
                if length > MAX_FUNCTION:
                    over[f'{rel}:{name}'] = f'{rel}:{first}: {name} is {length} lines (at most {MAX_FUNCTION})'
                elif listing and length > 60:
                    print(f'{rel}:{first}: {name} {length}')
    for key, text in sorted(over.items()):
        if key not in pending:
            problems.append(text)
    for key in sorted(pending - set(over)):
        problems.append(f'{key} is listed in tests/structure/sizes_pending.txt but is no longer over; remove it')
    for p in problems:
        print('FAIL ' + p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
