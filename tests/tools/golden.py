#!/usr/bin/env python3
"""Golden outputs: what `kernodeck audit` prints for the example images in every format, kept
under tests/golden/ (NAME.FORMAT) so a change in output is seen in review. The images (IMAGES):
demo, the README's example (examples/demo/image.json), and families (tests/golden/images/
families.json, written by tests/golden/images/families.py): an Alpine root with an apk database
and a file rewritten in a later layer, a conda environment, a venv with torch, RECORD drift, a
broken dependency contract, whiteouts (plain and opaque), a hard link, credentials in .netrc and
pip.conf, and gzip, zstd and uncompressed layers.

  golden.py check  KERNODECK MKIMAGE SOURCE_DIR [NAME...]   ctest golden.NAME: outputs equal the files
  golden.py update KERNODECK MKIMAGE SOURCE_DIR [NAME...]   rewrite them (scripts/update-golden)

Each run builds the image with kdk-mkimage in a fresh temporary folder and audits it from
there by a relative reference (oci:NAME:TAG) with --platform linux/amd64, HOME and XDG_CACHE_HOME
inside that folder: no temporary or checkout path, host platform or cache reaches the output, so
the files are the same in every worktree and on every machine. What still changes from run to
run is replaced by normalise(), the one place that says what is volatile. `check` audits twice
and also fails when the two normalised runs differ (the output is not deterministic)."""
import datetime
import difflib
import os
import re
import subprocess
import sys
import tempfile

FORMATS = ['text', 'json', 'sarif', 'cyclonedx', 'spdx', 'html']
# name -> (the kdk-mkimage spec, relative to the source tree; the tag it writes)
IMAGES = {
    'demo': ('examples/demo/image.json', '1.0'),
    'families': ('tests/golden/images/families.json', '2.0'),
}
TIMESTAMP = re.compile(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z')
UUID = re.compile(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}')


def normalise(text, started, finished):
    """The report with what differs between two runs on the same image replaced by a placeholder:
    - a timestamp within [started, finished] (the report's own time; the image's dates stay),
    - step durations: text "  123 ms" in the Steps table (right-aligned in the same width), JSON "duration_ms", the HTML steps
      table's ms cell,
    - UUIDs (CycloneDX serialNumber, SPDX documentNamespace: derived from the whole report, so
      from its time and durations),
    - the JSON report's hostname."""
    def stamp(m):
        t = datetime.datetime.strptime(m.group(0)[:19], '%Y-%m-%dT%H:%M:%S').replace(tzinfo=datetime.timezone.utc)
        return '<now>' if started - 1 <= t.timestamp() <= finished + 1 else m.group(0)

    text = TIMESTAMP.sub(stamp, text)
    text = re.sub(r'^(  [a-z-]+ +[\w.-]+)( +\d+)(?= ms(?:  |$))',
                  lambda m: m.group(1) + '<ms>'.rjust(max(len(m.group(2)), 5)), text, flags=re.M)
    text = re.sub(r'"duration_ms": \d+', '"duration_ms": "<ms>"', text)
    text = re.sub(r'(<tr><td>[^<]*</td><td class="[^"]*">[^<]*</td><td>)\d+(</td>)', r'\1<ms>\2', text)
    text = UUID.sub('<uuid>', text)
    return re.sub(r'^(  "hostname": )"[^"]*"', r'\1"<host>"', text, flags=re.M)


def outputs(kernodeck, mkimage, source, name):
    """{format: normalised output} of one audit per format of a freshly built image NAME."""
    spec, tag = IMAGES[name]
    with tempfile.TemporaryDirectory(prefix='kdk-golden-') as tmp:
        env = dict(os.environ, HOME=tmp, XDG_CACHE_HOME=os.path.join(tmp, 'cache'), LC_ALL='C', TZ='UTC')
        subprocess.run([mkimage, os.path.join(source, spec), name], cwd=tmp,
                       env=env, check=True, capture_output=True, timeout=120)
        result = {}
        for fmt in FORMATS:
            out = os.path.join(tmp, 'out.' + fmt)
            started = datetime.datetime.now(datetime.timezone.utc).timestamp()
            p = subprocess.run([kernodeck, 'audit', '--platform', 'linux/amd64', '--format', fmt, '-o', out,
                                f'oci:{name}:{tag}'], cwd=tmp, env=env, capture_output=True, text=True, timeout=120)
            finished = datetime.datetime.now(datetime.timezone.utc).timestamp()
            if p.returncode != 1:  # both images carry credentials on purpose: findings, exit 1
                sys.exit(f'kernodeck audit --format {fmt} exited {p.returncode}, not 1: {p.stderr}')
            with open(out, encoding='utf-8') as f:
                result[fmt] = normalise(f.read(), started, finished)
        return result


def main(argv):
    if len(argv) < 5 or argv[1] not in ('check', 'update') or any(n not in IMAGES for n in argv[5:]):
        sys.exit(__doc__)
    mode = argv[1]
    kernodeck, mkimage, source = (os.path.abspath(a) for a in argv[2:5])
    failures = 0
    for image in argv[5:] or sorted(IMAGES):
        failures += check_or_update(mode, kernodeck, mkimage, source, image)
    return 1 if failures else 0


def check_or_update(mode, kernodeck, mkimage, source, image):
    """The number of failures for IMAGE (update: rewrites its files, 0)."""
    golden = os.path.join(source, 'tests', 'golden')
    first = outputs(kernodeck, mkimage, source, image)
    if mode == 'update':
        os.makedirs(golden, exist_ok=True)
        for fmt, text in first.items():
            with open(os.path.join(golden, image + '.' + fmt), 'w', encoding='utf-8') as f:
                f.write(text)
        print(f'wrote {len(first)} files for {image} to {golden}')
        return 0
    failures = 0
    second = outputs(kernodeck, mkimage, source, image)
    for fmt in FORMATS:
        name = f'tests/golden/{image}.' + fmt
        if first[fmt] != second[fmt]:
            print(f'FAIL {fmt}: two runs differ after normalise(): the output is not deterministic')
            sys.stdout.writelines(difflib.unified_diff(first[fmt].splitlines(True), second[fmt].splitlines(True),
                                                       'run 1', 'run 2'))
            failures += 1
        try:
            with open(os.path.join(source, name), encoding='utf-8') as f:
                want = f.read()
        except OSError as e:
            print(f'FAIL {name}: {e.strerror} (scripts/update-golden writes it)')
            failures += 1
            continue
        if want != first[fmt]:
            print(f'FAIL {name} differs from the output (if the change is meant, run scripts/update-golden '
                  'and commit the files):')
            sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), first[fmt].splitlines(True), name,
                                                       'kernodeck audit --format ' + fmt))
            failures += 1
        else:
            print(f'ok   {name}')
    return failures


if __name__ == '__main__':
    sys.exit(main(sys.argv))
