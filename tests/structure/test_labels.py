#!/usr/bin/env python3
"""ctest structure.test_labels: every test that needs root, podman, a Debian mirror or a GPU is
labelled so in tests/labels.txt, and every line of that table still names a test.

What a test needs is read from its source, the way the tests themselves decide to skip:
  root     the body (or its fixture, or a helper of the same file it calls) tests geteuid(), or
           checks for a root-only tool with haveTool (runc, crun, podman, containerd, unshare,
           chroot, mount, mknod, debootstrap);
  podman   it checks haveTool("podman");
  network  it runs debootstrap (tests/fixtures/debootstrap-python fetches from Debian's mirror);
  gpu      it opens a real /dev/nvidia* device (no test does today: GPU facts come from fixture
           trees, and scripts/gpu-check is the check on a real GPU);
  arm64    it runs the arm64 cross build through qemu-aarch64-static (arm64Node(): `ctest -L arm64`
           runs them; they skip, naming why, without the cross build or qemu);
  nvcc     it runs tests/fixtures/gpu-fatbins/make-gpu-fatbins (NVIDIA's compilers, no GPU);
  cublaslt it reads Debian's non-free libcublasLt.so.11 (KDK_CUBLASLT) and runs cuobjdump on it.
A test that needs something and lacks the label fails this check, so `ctest -LE
"root|podman|network|gpu"` stays the hermetic set. Two more labels say nothing of needs:
  slow     it takes 20 s or more; ctest starts it first (COST, tests/labels.cmake) when it has
           no timings of an earlier run, so a fresh clone's run does not end on one.
  together (Suite.* only) the suite's tests share a costly SetUpTestSuite and run as one ctest
           test, "Suite.*", in one process (tests/together.cmake).

Usage: test_labels.py SOURCE_DIR [--list] [--table FILE] [--tests DIR]"""
import os
import re
import sys

ROOT_TOOLS = r'runc|crun|podman|containerd|ctr|unshare|chroot|mount|mknod|rpmbuild'
# haveTool("x"), or a loop over a list of tools that holds "x": for (... : {"podman", "skopeo"})
# if (!haveTool(tool)).
def _checks(tools):
    return (r'haveTool\(\s*"(?:' + tools + r')"|\{[^{}]*"(?:' + tools + r')"[^{}]*\}\s*\)\s*if\s*\(\s*!\s*haveTool\(')


NEEDS = {
    'root': re.compile(r'geteuid\s*\(\s*\)\s*!=\s*0|' + _checks(ROOT_TOOLS)),
    'podman': re.compile(_checks('podman')),
    'network': re.compile(r'debootstrap-python'),
    'gpu': re.compile(r'(?:open|access|exists)\(\s*"/dev/nvidia'),
    'arm64': re.compile(r'\barm64Node\s*\(\s*\)\s*;'),
    'nvcc': re.compile(r'make-gpu-fatbins'),
    'cublaslt': re.compile(r'KDK_CUBLASLT'),
}
ORDER = ('slow', 'together')
TEST_MACRO = re.compile(r'^\s*(TEST|TEST_F|TEST_P)\(\s*(\w+)\s*,\s*(\w+)\s*\)', re.M)
FUNCTION = re.compile(r'^[\w:<>,&* ]+?\b(\w+)\s*\([^;{]*\)\s*(?:const\s*)?\{', re.M)


LITERAL = re.compile(r'R"(\w*)\((?:.|\n)*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*(?:.|\n)*?\*/')


def masked(text):
    """The text with string and character literals and comments blanked (same length), so braces
    inside them do not count."""
    return LITERAL.sub(lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text)


def block_end(text, start):
    """The index after the brace-balanced block that opens at or after start (text masked)."""
    i = text.index('{', start)
    depth = 0
    while i < len(text):
        if text[i] == '{':
            depth += 1
        elif text[i] == '}':
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


def tests_in(path):
    """(Suite.Name, text that decides its needs) for each test in a source file."""
    text = open(path, encoding='utf-8').read()
    code = masked(text)
    helpers = {}
    for m in FUNCTION.finditer(code):
        if m.group(1) not in ('TEST', 'TEST_F', 'TEST_P', 'if', 'for', 'while', 'switch'):
            helpers[m.group(1)] = text[m.start():block_end(code, m.end() - 1)]
    fixtures = {}
    for m in re.finditer(r'^(?:class|struct)\s+(\w+)\s*:[^{;]*\{', code, re.M):
        fixtures[m.group(1)] = text[m.start():block_end(code, m.end() - 1)]
    for m in TEST_MACRO.finditer(code):
        body = text[m.start():block_end(code, m.end())]
        deciding = body + fixtures.get(m.group(2), '')
        # One level of helpers: a same-file function the body (or fixture) calls.
        for name, helper in helpers.items():
            if re.search(r'\b' + name + r'\s*\(', deciding) and helper not in deciding:
                deciding += helper
        yield f'{m.group(2)}.{m.group(3)}', deciding


def read_table(path):
    """[(label, pattern, regex)] from tests/labels.txt; the regex is the one tests/labels.cmake uses."""
    rows = []
    for line in open(path, encoding='utf-8'):
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        label, pattern = line.split()
        suite, _, name = pattern.partition('.')
        regex = '(^|/)' + suite + r'\.' + ('[^/]*' if name == '*' else name) + '(/|$)'
        rows.append((label, pattern, re.compile(regex)))
    return rows


def check(rows, found, source, listing):
    """The problems with the table: a test needing what it is not labelled, a rule naming no test."""
    problems = []
    for name, text, path in sorted(found):
        needs = [label for label, rx in NEEDS.items() if rx.search(text)]
        labels = sorted({label for label, _, rx in rows if rx.search(name)})
        if listing and needs:
            print(f'{name}: needs {",".join(needs)}; labelled {",".join(labels) or "-"}')
        for need in needs:
            if need not in labels:
                problems.append(f'{name} ({os.path.relpath(path, source)}) needs {need} but tests/labels.txt '
                                f'does not label it {need}')
    names = [n for n, _, _ in found]
    for label, pattern, rx in rows:
        if label not in NEEDS and label not in ORDER:
            problems.append(f'tests/labels.txt: unknown label {label!r} (one of {", ".join([*NEEDS, *ORDER])})')
        if label == 'together' and not pattern.endswith('.*'):
            problems.append(f'tests/labels.txt: together takes a whole suite (Suite.*), not {pattern}')
        if not any(rx.search(n) for n in names):
            problems.append(f'tests/labels.txt: {label} {pattern} names no test')
    return problems


def main(argv):
    source = argv[1]
    table = os.path.join(source, 'tests', 'labels.txt')
    tests_dir = os.path.join(source, 'tests')
    if '--table' in argv:
        table = argv[argv.index('--table') + 1]
    if '--tests' in argv:
        tests_dir = argv[argv.index('--tests') + 1]
    rows = read_table(table)
    found = []
    for dirpath, _, files in os.walk(tests_dir):
        if os.sep + 'fuzz' in dirpath:
            continue
        for f in sorted(files):
            if f.endswith('_test.cc'):
                found += [(name, text, os.path.join(dirpath, f)) for name, text in tests_in(os.path.join(dirpath, f))]
    problems = check(rows, found, source, '--list' in argv)
    for p in problems:
        print('FAIL ' + p)
    failures = len(problems)
    # The check can fail: without the table's first root rule, the test it names is reported.
    dropped = next(r for r in rows if r[0] == 'root')
    without = check([r for r in rows if r is not dropped], found, source, False)
    if not any(f'needs root but tests/labels.txt does not label it root' in p and
               re.sub(r'\*$', '', dropped[1]) in p for p in without):
        print(f'FAIL the check does not notice a missing rule (root {dropped[1]}): {without}')
        failures += 1
    print(f'{len(found)} tests read, {len(rows)} label rules, {failures} problems')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
