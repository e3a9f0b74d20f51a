#!/usr/bin/env python3
"""ctest docs.cited_names: every `ns::name` that README.md and docs/*.md (docs/ARCHITECTURE.md
first) cite is declared in namespace kernodeck::ns under src/ or include/ (kdktest::, the tests'
helpers, under tests/), so the docs do not send a reader to a function that moved or never was
(`gpu::checkContainer` was `hook::checkContainer`).

A name is declared when, after comments and string literals are blanked, it follows class, struct,
enum or using, or follows a type and precedes `(`, `{`, `=`, `;` or `[`, at a point whose nearest
enclosing `namespace kernodeck::X {` has X == ns (nested namespaces and members of classes count:
`audit::walkLayers` is a member of the auditor in kernodeck::audit). `kernodeck::oci` names a
module's namespace; std::, json:: and other libraries' names are skipped.

Usage: doc_names.py SOURCE_DIR [DOC...]   (default README.md and docs/*.md); --self-test also checks
that a made-up name and a name in the wrong namespace are reported."""
import os
import re
import sys

CITED = re.compile(r'\b([a-z_][a-z0-9_]*)::([A-Za-z_]\w*)')
LITERAL = re.compile(r'R"(\w*)\((?:.|\n)*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*(?:.|\n)*?\*/')
NAMESPACE = re.compile(r'^namespace (?:kernodeck::)?(\w+)(?:::\w+)* \{', re.M)
SKIP = {'std', 'json', 'nlohmann', 'boost', 'po', 'fs'}  # other projects' names


def sources(root):
    """{path: code with comments and literals blanked} for every C++ file under src/, include/, tests/."""
    code = {}
    for top in ('src', 'include', 'tests'):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith(('.h', '.cc')):
                    path = os.path.join(dirpath, f)
                    text = open(path, encoding='utf-8', errors='replace').read()
                    code[path] = LITERAL.sub(lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text)
    return code


def declared(code, ns, name):
    """The first file declaring name in namespace kernodeck::ns, or None."""
    decl = re.compile(r'\b(?:class|struct|enum(?:\s+class)?|using)\s+' + name + r'\b|[\w>&*\]]\s+[&*]*' + name +
                      r'\s*[({=;\[]')
    if ns == 'kernodeck':  # kernodeck::oci: a module's namespace
        return next((p for p, t in code.items() if re.search(r'^namespace kernodeck::' + name + r'\b', t, re.M)), None)
    for path, text in code.items():
        if name not in text:
            continue
        opens = [(m.start(), m.group(1)) for m in NAMESPACE.finditer(text)]
        for m in decl.finditer(text):
            enclosing = [n for at, n in opens if at < m.start()]
            if enclosing and enclosing[-1] == ns:
                return path
    return None


def problems(root, docs, code):
    found = []
    for doc in docs:
        text = open(doc, encoding='utf-8').read()
        for ns, name in sorted(set(CITED.findall(text))):
            if ns in SKIP:
                continue
            if not declared(code, ns, name):
                found.append(f'{os.path.relpath(doc, root)} cites {ns}::{name}, which no file under src/, '
                             f'include/ or tests/ declares in namespace {ns}')
    return found


def main(argv):
    root = argv[1]
    docs = [a for a in argv[2:] if not a.startswith('--')]
    if not docs:
        docs = [os.path.join(root, 'docs', 'ARCHITECTURE.md'), os.path.join(root, 'README.md')]
        docs += sorted(os.path.join(root, 'docs', f) for f in os.listdir(os.path.join(root, 'docs'))
                       if f.endswith('.md') and f != 'ARCHITECTURE.md')
    code = sources(root)
    failures = problems(root, docs, code)
    for f in failures:
        print('FAIL ' + f)
    if '--self-test' in argv:
        import tempfile
        with tempfile.NamedTemporaryFile('w', suffix='.md', delete=False) as f:
            f.write('`gpu::checkContainer` and `util::noSuchFunctionAnywhere`, but `hook::checkContainer`.\n')
        got = problems(root, [f.name], code)
        os.unlink(f.name)
        wanted = ['gpu::checkContainer', 'util::noSuchFunctionAnywhere']
        if len(got) != 2 or not all(any(w in g for g in got) for w in wanted):
            print(f'FAIL self-test: wanted exactly {wanted} reported, got {got}')
            failures.append('self-test')
        else:
            print('ok   self-test: a wrong namespace and a made-up name are reported')
    print(f'{len(failures)} problems')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
