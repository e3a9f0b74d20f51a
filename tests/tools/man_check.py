#!/usr/bin/env python3
"""ctest docs.man_pages: the man pages scripts/gen-man wrote at build time say what --help says.
For every page: each option line of the --help it came from (its head and description, spaces
folded) is in the page as `man` renders it, and each option the page tags (.TP) is in that
--help; kernodeck(1) names every command `kernodeck --help` lists, each with its own page, and
each action of a command is a section of the command's page.

Usage: man_check.py MAN_DIR KERNODECK HOOK [PROBE]
       man_check.py --self-test (a page missing an option, or with one --help lacks, fails)"""
import os
import re
import subprocess
import sys

OPTION = re.compile(r'^  (-[A-Za-z0-9]|--[A-Za-z0-9])')


def fold(text):
    return ' '.join(text.split())


def help_options(text):
    """Each option line of a --help with its continuation lines, folded."""
    out, lines, i = [], text.split('\n'), 0
    while i < len(lines):
        if OPTION.match(lines[i]):
            entry = lines[i]
            i += 1
            while i < len(lines) and lines[i].startswith('   ') and lines[i].strip() and not OPTION.match(lines[i]):
                entry += ' ' + lines[i]
                i += 1
            out.append(fold(entry))
        else:
            i += 1
    return out


def rendered(page):
    env = dict(os.environ, MANWIDTH='300', MAN_KEEP_FORMATTING='')
    r = subprocess.run(['man', '-E', 'ascii', '-l', page], capture_output=True, text=True, env=env, timeout=60)
    if r.returncode != 0:
        raise SystemExit(f'man -l {page}: {r.stderr.strip()}')
    plain = subprocess.run(['col', '-b'], input=r.stdout, capture_output=True, text=True).stdout
    return fold(plain)


def tagged(page):
    """The option heads the page tags: the line after each .TP, unescaped."""
    lines = open(page, encoding='utf-8').read().split('\n')
    heads = []
    for i, line in enumerate(lines[:-1]):
        if line == '.TP':
            heads.append(lines[i + 1].removeprefix('.B ').replace('\\-', '-').replace('\\e', '\\'))
    return heads


def compare(page, helps):
    """Problems between PAGE and the --help texts it was made from."""
    problems = []
    text = rendered(page)
    all_help = '\n'.join(helps)
    for h in helps:
        for opt in help_options(h):
            if opt not in text:
                problems.append(f'{os.path.basename(page)}: --help says "{opt[:80]}", the page does not')
    help_heads = {fold(o.split('  ')[0]) for h in helps for o in [l[2:] for l in h.split('\n') if OPTION.match(l)]}
    for head in tagged(page):
        if fold(head) not in help_heads:
            problems.append(f'{os.path.basename(page)}: the page tags "{head}", which --help lacks')
    if not help_heads and not all_help:
        problems.append(f'{page}: no --help')
    return problems


def run_help(argv):
    r = subprocess.run(argv + ['--help'], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise SystemExit(f'{" ".join(argv)} --help exited {r.returncode}')
    return r.stdout


def check(man_dir, kernodeck, hook, probe):
    problems = []
    top = run_help([kernodeck])
    commands = re.findall(r'^  ([a-z][a-z-]*) +\S', top, re.M)
    if len(commands) < 5:
        problems.append(f'kernodeck --help lists {len(commands)} commands')
    problems += compare(os.path.join(man_dir, 'kernodeck.1'), [top])
    top_page = rendered(os.path.join(man_dir, 'kernodeck.1'))
    for cmd in commands:
        page = os.path.join(man_dir, f'kernodeck-{cmd}.1')
        if not os.path.exists(page):
            problems.append(f'no page for kernodeck {cmd}')
            continue
        if f'kernodeck-{cmd}(1)' not in top_page:
            problems.append(f'kernodeck(1) does not name kernodeck-{cmd}(1)')
        helps = [run_help([kernodeck, cmd])]
        first = helps[0].split('\n', 1)[0]
        if ('|' in first and '[--' not in first) or 'SUBCOMMAND' in first or " ACTION --help'" in helps[0]:
            for action in re.findall(r'^  ([a-z][a-z-]*) {2,}\S', helps[0], re.M):
                helps.append(run_help([kernodeck, cmd, action]))
                if f'KERNODECK {cmd.upper()} {action.upper()}' not in rendered(page):
                    problems.append(f'kernodeck-{cmd}(1) has no section for its action {action}')
        if cmd == 'probe' and probe:  # the static kernodeck-probe shares the page
            helps.append(run_help([probe]))
        problems += compare(page, helps)
    problems += compare(os.path.join(man_dir, 'kernodeck-hook.8'), [run_help([hook])])
    # EXAMPLES from the docs (scripts/gen-man --docs): the README's first audit and hook install.
    for page, line in (('kernodeck-audit.1', 'kernodeck audit --fail-on warning docker-archive:image.tar'),
                       ('kernodeck-hook.8', 'kernodeck-hook install --policy warn')):
        text = rendered(os.path.join(man_dir, page))
        if 'EXAMPLES' not in text or line not in text:
            problems.append(f'{page}: no EXAMPLES section with the docs\' "{line}"')
    return problems


def self_test(man_dir, kernodeck):
    """A page that lost an option, and one that tags an option --help lacks, are both caught."""
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp(prefix='kdk-man-')
    try:
        page = os.path.join(tmp, 'kernodeck-audit.1')
        shutil.copy(os.path.join(man_dir, 'kernodeck-audit.1'), page)
        text = open(page, encoding='utf-8').read()
        helps = [run_help([kernodeck, 'audit'])]
        assert not compare(page, helps), compare(page, helps)
        cut = re.sub(r'\.TP\n\.B \\-\\-fail\\-on LEVEL\n[^\n]*\n', '', text, count=1)
        assert cut != text, 'the audit page has no --fail-on entry to remove'
        open(page, 'w', encoding='utf-8').write(cut)
        missing = compare(page, helps)
        added = text.replace('.SH SEE ALSO', '.TP\n.B \\-\\-no\\-such\\-flag\nnothing\n.SH SEE ALSO')
        open(page, 'w', encoding='utf-8').write(added)
        extra = compare(page, helps)
    finally:
        shutil.rmtree(tmp)
    ok = any('--fail-on' in p for p in missing) and any('--no-such-flag' in p for p in extra)
    print('self-test:', 'ok' if ok else f'FAILED (missing={missing}, extra={extra})')
    return ok


def main():
    args = sys.argv[1:]
    selftest = '--self-test' in args
    args = [a for a in args if a != '--self-test']
    if len(args) < 3:
        raise SystemExit(__doc__)
    man_dir, kernodeck, hook = args[:3]
    probe = args[3] if len(args) > 3 else None
    problems = check(man_dir, kernodeck, hook, probe)
    for p in problems:
        print(p)
    ok = not problems and (not selftest or self_test(man_dir, kernodeck))
    print('man pages match --help' if ok else 'FAILED')
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
