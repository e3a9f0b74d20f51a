#!/usr/bin/env python3
"""Renders Markdown files to HTML with Debian's python3-markdown (fenced code and tables, as
GitHub renders them) and fails when the rendering shows a broken structure:

- a code fence left in the text (an unbalanced fence);
- a code block without a language: every fence here opens with one (```sh, ```json, ```text),
  so a block without one is a closing fence taken for an opening one, which swallows the prose
  up to the next bare fence;
- a table (its ``|---|`` separator row) that did not become a table: a fence swallowed it.

usage: check_markdown.py FILE.md...   (exit 0 when every file renders whole, 1 otherwise)
"""
import re
import sys

import markdown


def check(path):
    text = open(path, encoding="utf-8").read()
    html = markdown.markdown(text, extensions=["fenced_code", "tables"])
    problems = []
    # Outside code blocks, no fence may survive.
    prose = re.sub(r"<pre><code[^>]*>.*?</code></pre>", "", html, flags=re.S)
    for m in re.finditer(r"(```|~~~)", prose):
        problems.append(f"a code fence is left in the text near: {prose[max(0, m.start() - 60):m.end() + 40]!r}")
    for m in re.finditer(r"<pre><code>(.*?)</code></pre>", html, flags=re.S):
        first = m.group(1).strip().splitlines()[:1]
        problems.append(f"a code block without a language (a fence out of place?) starting: {first!r}")
    separators = [l for l in text.splitlines() if re.match(r"^\|(\s*:?-+:?\s*\|)+\s*$", l)]
    tables = html.count("<table>")
    if tables != len(separators):
        problems.append(f"{len(separators)} tables written but {tables} rendered (a fence swallowed some)")
    for p in problems:
        print(f"{path}: {p}", file=sys.stderr)
    return not problems


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    ok = all([check(p) for p in sys.argv[1:]])
    if ok:
        print(f"{len(sys.argv) - 1} file(s) render whole")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
