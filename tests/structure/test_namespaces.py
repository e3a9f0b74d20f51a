#!/usr/bin/env python3
"""ctest structure.test_namespaces: the test programs' sources can share a unity batch.

With KERNODECK_UNITY (scripts/test, scripts/fuzz) unit_tests and integration_tests are compiled
a batch of sources at a time, as one unit: a file's anonymous namespace, its helpers and its
file-scope `using namespace` lines would reach the files after it in the batch. So every *_test.cc
of the two programs (tests/CMakeLists.txt) keeps its code in a namespace of its own, named for its
path (tests/oci/breakout_test.cc: oci_breakout_test), opened after its #include lines and closed
on its last line, with no `using namespace` before it; the programs' other sources (support.cc,
...) open no `using namespace` at file scope. A source tests/CMakeLists.txt leaves out of the
batches (SKIP_UNITY_BUILD_INCLUSION) is not checked. A developer's build compiles each file alone
and would not notice a clash; this check does.

Usage: test_namespaces.py SOURCE_DIR [--self-test]"""
import re
import sys

USING_NAMESPACE = re.compile(r'^using namespace ', re.M)


def sources(cmake_text):
    """The two programs' sources, and those kept out of the unity batches."""
    listed = []
    for target in ('unit_tests', 'integration_tests'):
        block = re.search(r'add_executable\(' + target + r'\n(.*?)\)', cmake_text, re.S)
        listed += block.group(1).split()
    skipped = set()
    for m in re.finditer(r'set_source_files_properties\(([^)]*?)PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON', cmake_text):
        skipped.update(m.group(1).split())
    return listed, skipped


def problems(path, text):
    """What keeps the source at path (relative to tests/) from sharing a batch: a list of lines."""
    first_namespace = re.search(r'^namespace ([\w:]*) ?\{', text, re.M)
    head = text[:first_namespace.start()] if first_namespace else text
    found = []
    if USING_NAMESPACE.search(head):
        found.append('%s: `using namespace` at file scope' % path)
    if not path.endswith('_test.cc'):
        return found
    name = path[:-len('.cc')].replace('/', '_')
    if not first_namespace or first_namespace.group(1) != name:
        found.append('%s: its code is not in namespace %s (its first namespace: %s)' %
                     (path, name, (first_namespace.group(1) or 'anonymous') if first_namespace else 'none'))
    elif re.search(r'^#include', text[first_namespace.end():], re.M):
        found.append('%s: an #include inside namespace %s' % (path, name))
    elif text.rstrip().splitlines()[-1] != '}  // namespace ' + name:
        found.append('%s: namespace %s does not end on the last line' % (path, name))
    return found


def self_test():
    good = '#include <x>\n\nnamespace util_a_test {\n\nusing namespace kernodeck;\n\n}  // namespace util_a_test\n'
    assert problems('util/a_test.cc', good) == [], problems('util/a_test.cc', good)
    cases = {
        'using outside': good.replace('namespace util_a_test {\n', 'using namespace kernodeck;\nnamespace util_a_test {\n'),
        'anonymous only': good.replace('namespace util_a_test {', 'namespace {'),
        'other name': good.replace('util_a_test', 'oci_a_test'),
        'closed early': good + 'TEST(A, B) {}\n',
    }
    for what, text in cases.items():
        assert problems('util/a_test.cc', text), what
    assert problems('integration/support.cc', 'using namespace kdktest;\n')
    assert problems('integration/support.cc', 'namespace kdktest {\nusing namespace x;\n}\n') == []


def main():
    if '--self-test' in sys.argv:
        self_test()
    root = sys.argv[1]
    listed, skipped = sources(open(root + '/tests/CMakeLists.txt').read())
    found = []
    for path in listed:
        if path not in skipped:
            found += problems(path, open(root + '/tests/' + path).read())
    for line in found:
        print('structure.test_namespaces: ' + line)
    print('%d sources checked, %d kept out of the batches' % (len(listed) - len(skipped & set(listed)),
                                                            len(skipped & set(listed))))
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
