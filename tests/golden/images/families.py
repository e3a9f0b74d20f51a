#!/usr/bin/env python3
"""Writes families.json (stdout), the second golden image for tests/tools/golden.py: run
`python3 tests/golden/images/families.py > tests/golden/images/families.json` after changing it."""
import base64, hashlib, json
def q1(s): return 'Q1' + base64.b64encode(hashlib.sha1(s.encode()).digest()).decode()
def rec(s): return 'sha256=' + base64.urlsafe_b64encode(hashlib.sha256(s.encode()).digest()).decode().rstrip('=')
def f(path, content, mode=None):
    e = {'path': path, 'content': content}
    if mode: e['mode'] = mode
    return e
L1 = [{'path': 'etc/', 'type': 'dir'},
      f('etc/os-release', 'NAME="Alpine Linux"\nID=alpine\nVERSION_ID=3.19.1\nPRETTY_NAME="Alpine Linux v3.19"\n')]
apk_files = [('busybox', 'bin', 'busybox', '\x7fELF busybox\n', True),
             ('musl', 'lib', 'ld-musl-x86_64.so.1', '\x7fELF musl\n', True),
             ('python3', 'usr/bin', 'python3.11', '\x7fELF python\n', True),
             ('python3', 'usr/lib/python3.11', 'os.py', 'import sys\n', False),
             ('ca-certificates', 'etc/ssl', 'cert.pem', '-----BEGIN CERTIFICATE-----\n', False)]
db = {}
for pkg, d, name, content, x in apk_files:
    lines = db.setdefault(pkg, '')
    if 'F:' + d + '\n' not in lines: lines += 'F:' + d + '\n'
    lines += 'R:' + name + '\n' + ('a:0:0:755\n' if x else '') + 'Z:' + q1(content) + '\n'
    db[pkg] = lines
    L1.append(f(d + '/' + name, content, 493 if x else None))
installed = ''.join('C:Q1AAAA\nP:%s\nV:1.0-r0\nA:x86_64\no:%s\n%s\n' % (p, p, l) for p, l in sorted(db.items()))
L1.append(f('lib/apk/db/installed', installed))
L1.append({'path': 'bin/sh', 'type': 'symlink', 'target': 'busybox'})
L1.append(f('tmp/cache/a.whl', 'PK old wheel'))
L1.append(f('srv/old/data.txt', 'old'))

# conda environment at /opt/conda
P = 'opt/conda'; site = 'lib/python3.11/site-packages'
def entry(path, content): return {'_path': path, 'path_type': 'hardlink', 'sha256': hashlib.sha256(content.encode()).hexdigest(), 'size_in_bytes': len(content)}
interp = '\x7fELF conda python\n'
L2 = [f(P + '/bin/python3.11', interp, 493), f(P + '/conda-meta/history', '==> 2024-01-01 <==\n')]
L2.append(f(P + '/conda-meta/python-3.11.5-h955ad1f_0.json', json.dumps({
    'name': 'python', 'version': '3.11.5', 'build': 'h955ad1f_0', 'build_number': 0,
    'channel': 'https://repo.anaconda.com/pkgs/main/linux-64', 'subdir': 'linux-64',
    'files': ['bin/python3.11'], 'paths_data': {'paths_version': 1, 'paths': [entry('bin/python3.11', interp)]}}, sort_keys=True)))
def dist(prefix, name, version, installer, files, requires=''):
    di = '%s-%s.dist-info' % (name.replace('-', '_'), version)
    meta = 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n%s' % (name, version, requires)
    out = dict(files); out[di + '/METADATA'] = meta; out[di + '/INSTALLER'] = installer + '\n'
    record = ''.join('%s,%s,%d\n' % (p, rec(c), len(c)) for p, c in sorted(out.items())) + di + '/RECORD,,\n'
    return [f(prefix + '/' + p, c) for p, c in sorted(out.items())] + [f(prefix + '/' + di + '/RECORD', record)], out
numpy_entries, numpy_files = dist(P + '/' + site, 'numpy', '1.26.0', 'conda', {'numpy/__init__.py': "__version__ = '1.26.0'\n"})
L2 += numpy_entries
L2.append(f(P + '/conda-meta/numpy-1.26.0-py311h24aa872_0.json', json.dumps({
    'name': 'numpy', 'version': '1.26.0', 'build': 'py311h24aa872_0', 'channel': 'https://conda.anaconda.org/conda-forge/linux-64',
    'subdir': 'linux-64', 'files': [site + '/' + p for p in sorted(numpy_files)] + [site + '/numpy-1.26.0.dist-info/RECORD'],
    'paths_data': {'paths_version': 1, 'paths': [entry(site + '/' + p, c) for p, c in sorted(numpy_files.items())]}}, sort_keys=True)))

# a venv with torch, a broken dependency contract, and RECORD drift
V = 'opt/venv'; vs = V + '/lib/python3.11/site-packages'
L3 = [f(V + '/pyvenv.cfg', 'home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.7\n'),
      {'path': V + '/bin/python3', 'type': 'symlink', 'target': '/usr/bin/python3.11'}]
e, _ = dist(vs, 'torch', '2.3.1+cu121', 'pip', {'torch/version.py': "__version__ = '2.3.1+cu121'\ncuda = '12.1'\ngit_version = 'abc'\n",
                                                 'torch/__init__.py': 'from .version import __version__\n'},
            'Requires-Dist: filelock\nRequires-Dist: nvidia-cuda-runtime-cu12==12.1.105; platform_system == "Linux"\n')
L3 += e
e, _ = dist(vs, 'filelock', '3.13.1', 'pip', {'filelock/__init__.py': 'x = 1\n'}); L3 += e
e, _ = dist(vs, 'requests', '2.31.0', 'pip', {'requests/__init__.py': 'import urllib3\n'}, 'Requires-Dist: urllib3<3,>=1.21.1\nRequires-Dist: idna<4,>=2.5\n'); L3 += e
e, _ = dist(vs, 'urllib3', '1.26.18', 'pip', {'urllib3/__init__.py': 'v = 1\n', 'urllib3/util.py': 'u = 1\n'}); L3 += e
e, _ = dist(vs, 'model-server', '0.3.0', 'pip', {'model_server/__init__.py': 'import torch\n', 'model_server/app.py': 'app = 1\n'},
            'Requires-Dist: torch>=2.4\nRequires-Dist: numpy\n'); L3 += e
L3.append(f('app/requirements.txt', 'torch==2.3.1\nrequests>=2\nmodel-server\n'))
L3.append(f('root/.netrc', 'machine pypi.example.com login ci password hunter2-example\n'))
L3.append(f('etc/pip.conf', '[global]\nindex-url = https://ci:s3cr3t-example@pypi.example.com/simple\n'))
L3.append({'path': 'app/serve', 'type': 'hardlink', 'target': V + '/pyvenv.cfg'})
# the last layer: whiteouts, a rewritten apk file, a changed RECORD-covered file, a removed one
L4 = [{'path': 'tmp/cache/.wh.a.whl', 'type': 'file', 'content': ''},
      {'path': 'srv/old/.wh..wh..opq', 'type': 'file', 'content': ''},
      f('srv/old/new.txt', 'new'),
      f('bin/busybox', '\x7fELF busybax\n', 493),
      f(vs + '/urllib3/util.py', 'u = 2  # patched in place\n'),
      {'path': vs + '/filelock/.wh.__init__.py', 'type': 'file', 'content': ''}]
spec = {'tag': '2.0', 'architecture': 'amd64', 'os': 'linux',
        'config': {'Env': ['PATH=/opt/venv/bin:/usr/bin:/bin', 'CUDA_VERSION=12.1.1', 'NVIDIA_REQUIRE_CUDA=cuda>=12.1'],
                   'Entrypoint': ['/opt/venv/bin/python3', '-m', 'model_server'], 'User': '0'},
        'layers': [{'compression': 'gzip', 'entries': L1}, {'compression': 'zstd', 'entries': L2},
                   {'compression': 'none', 'entries': L3}, {'compression': 'gzip', 'entries': L4}]}
print(json.dumps(spec, indent=2, ensure_ascii=True))
