#!/usr/bin/env python3
"""ctest structure.module_graph: scripts/check-modules passes on the tree as built, and
fails, naming the problem, on a cycle, an undeclared include (per library, two libraries of one
folder told apart) and a stale ARCHITECTURE.md."""
import os
import subprocess
import sys
import tempfile

root, graph = sys.argv[1], sys.argv[2]
checker = os.path.join(root, 'scripts', 'check-modules')
failures = 0


def run(tree, graph_file, *extra):
    p = subprocess.run([sys.executable, checker, '--graph', graph_file, '--root', tree, *extra],
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stderr


def expect(name, code, err, want_code, want_text):
    global failures
    if code != want_code or want_text not in err:
        print(f'FAIL {name}: exit {code}, stderr: {err!r}; wanted exit {want_code} and {want_text!r}')
        failures += 1
    else:
        print(f'ok   {name}')


code, err = run(root, graph)
expect('the tree as built', code, err, 0, '')


def tree(files):
    d = tempfile.mkdtemp()
    for path, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(d, path)), exist_ok=True)
        with open(os.path.join(d, path), 'w') as f:
            f.write(text)
    return d


docs = '# A\n\n## Module graph\n\n- **util** → (none)\n- **gpu** → util\n- **host** → gpu, util\n\n## Next\n'
base = {
    'src/util/a.cc': '#include "kernodeck/util/a.h"\n',
    'src/gpu/b.cc': '#include "kernodeck/util/a.h"\n',
    'src/host/c.cc': '#include "kernodeck/gpu/b.h"\n#include "kernodeck/util/a.h"\n',
    'docs/ARCHITECTURE.md': docs,
}
good = 'util util : \ngpu gpu : util\nhost host : gpu util\n'
t = tree({**base, 'modules.txt': good})
expect('a small honest tree', *run(t, os.path.join(t, 'modules.txt')), 0, '')

t = tree({**base, 'src/gpu/b.cc': '#include "kernodeck/host/c.h"\n', 'modules.txt': good})
expect('an undeclared include', *run(t, os.path.join(t, 'modules.txt')), 1,
       'src/gpu/b.cc: includes kernodeck/host/c.h of library host but library gpu does not declare host')

t = tree({**base, 'modules.txt': 'util util : \ngpu gpu : util host\nhost host : gpu util\n'})
expect('a cycle', *run(t, os.path.join(t, 'modules.txt')), 1, 'module cycle: gpu -> host -> gpu')

t = tree({**base, 'src/probe/d.cc': '#include "kernodeck/util/a.h"\n', 'modules.txt': good})
expect('a folder with no library', *run(t, os.path.join(t, 'modules.txt')), 1,
       'module probe is not declared in any CMakeLists.txt')

t = tree({**base, 'docs/ARCHITECTURE.md': docs.replace('- **host** → gpu, util', '- **host** → util'),
          'modules.txt': good})
expect('a stale ARCHITECTURE.md', *run(t, os.path.join(t, 'modules.txt')), 1,
       'docs/ARCHITECTURE.md: **host** → util; the build declares gpu, util')

# Two libraries in one folder (as oci_view and oci share src/oci): the check is per library, so
# the lower one may not include the upper one's header although both are folder gpu.
libs = ('util util : | a.cc\ngpu_view gpu : util | view.cc\ngpu gpu : gpu_view util | b.cc\n'
        'host host : gpu util | c.cc\n')
t = tree({**base, 'src/gpu/view.cc': '#include "kernodeck/gpu/view.h"\n#include "kernodeck/util/a.h"\n',
          'modules.txt': libs})
expect('two libraries of one folder, honest', *run(t, os.path.join(t, 'modules.txt')), 0, '')
t = tree({**base, 'src/gpu/view.cc': '#include "kernodeck/gpu/b.h"\n', 'modules.txt': libs})
expect('a per-library violation', *run(t, os.path.join(t, 'modules.txt')), 1,
       'src/gpu/view.cc: includes kernodeck/gpu/b.h of library gpu but library gpu_view does not declare gpu')
t = tree({**base, 'include/kernodeck/gpu/view.h': '#include "kernodeck/gpu/b.h"\n', 'modules.txt': libs})
expect('a per-library violation in a public header', *run(t, os.path.join(t, 'modules.txt')), 1,
       'include/kernodeck/gpu/view.h: includes kernodeck/gpu/b.h of library gpu but library gpu_view')
t = tree({**base, 'src/host/c.cc': '#include "kernodeck/gpu/view.h"\n', 'modules.txt': libs})
expect('a library used through another, undeclared', *run(t, os.path.join(t, 'modules.txt')), 1,
       'src/host/c.cc: includes kernodeck/gpu/view.h of library gpu_view but library host does not declare gpu_view')

sys.exit(1 if failures else 0)
