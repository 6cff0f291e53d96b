"""Dry-run every `apt-get install` the project runs, so a package conflict fails here with its name, not in CI.

Collects the `apt-get ... install` lines of `.ci/run`, the `Makefile` and `tools/*.sh`; a line whose package list is
a shell variable (as in `tools/browsers.sh`) is checked with the packages `tools/browsers.sh --plan` would install on
this machine. Each line is simulated with `apt-get install -s` (nothing is installed). Run by `make test` where
apt exists; elsewhere it says so and exits 0.

    python tools/apt_dry_run.py                                   # the project's lines
    python tools/apt_dry_run.py --line "apt-get install -y npm"   # any other line
"""
from __future__ import annotations
import argparse, os, re, shutil, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ('.ci/run', 'Makefile', 'tools/*.sh')          # files whose apt-get lines are checked
APT_INSTALL = re.compile(r'apt-get\b[^;&|\n]*?\binstall\b([^;&|\n]*)')
PROBLEM = re.compile(r'^\s*(\S+) : (Conflicts|Breaks|Depends|PreDepends): (.+)$', re.M)

def apt_lines(root:Path=ROOT, # repository root
             ) -> list[tuple[str, str]]:
    "Every `(file, install arguments)` pair that the project's scripts run (comments and quoted messages skipped)."
    out = []
    for pattern in SOURCES:
        for f in sorted(root.glob(pattern)):
            for line in f.read_text(encoding='utf-8').replace('\\\n', ' ').splitlines():
                code = re.sub(r'"[^"]*"|\'[^\']*\'', '""', line).split('#')[0]     # quoted text and comments are not commands
                for m in APT_INSTALL.finditer(code): out.append((str(f.relative_to(root)), m.group(1)))
    return out

def packages(args:str, # the words after `install` on one line
             plan:list[str], # packages that stand for a shell variable
            ) -> list[str]:
    "The package names of one install line: options and redirections dropped, variables replaced by `plan`."
    words = [w.strip('"\'()') for w in args.replace('\\', ' ').split('#')[0].split()]
    out = []
    for w in words:
        if not w: continue
        if w.startswith('$'): out += plan
        elif not w.startswith('-') and not w.startswith('>') and not w[:1].isdigit() and '=' not in w: out.append(w)
    return out

def simulate(pkgs:list[str], # Debian packages to install
            ) -> tuple[bool, str]:
    "Whether `apt-get install -s` accepts the packages, and the packages apt names as the problem."
    run = lambda: subprocess.run(['apt-get', 'install', '-s', '-y', *pkgs], capture_output=True, text=True)
    r = run(); text = r.stdout + r.stderr
    if 'Unable to locate package' in text and os.geteuid() == 0:    # package lists not fetched yet on a fresh machine
        subprocess.run(['apt-get', 'update', '-qq'], capture_output=True); r = run(); text = r.stdout + r.stderr
    if r.returncode == 0 and 'E:' not in text: return True, ''
    named = [f'{a} {kind.lower()} {b.strip()}' for a, kind, b in PROBLEM.findall(text)]
    missing = re.findall(r'Unable to locate package (\S+)', text)
    return False, '; '.join(named + [f'no package {m} (run apt-get update?)' for m in missing]) or text.strip()[-300:]

def browser_plan() -> list[str]:
    "Packages `tools/browsers.sh` would install on this machine."
    r = subprocess.run(['bash', str(ROOT / 'tools/browsers.sh'), '--plan'], capture_output=True, text=True, check=True)
    return r.stdout.split()

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--line', action='append', default=[], help='check this apt-get install line instead of the project\'s')
    a = ap.parse_args(argv)
    if not shutil.which('apt-get'): print('apt_dry_run: no apt-get on this machine; nothing to check'); return 0
    plan = browser_plan()
    lines = [('--line', m.group(1)) for l in a.line for m in [APT_INSTALL.search(l)] if m] if a.line else apt_lines()
    if a.line and len(lines) != len(a.line): raise SystemExit(f'--line: expected an "apt-get install PACKAGES" line, got {a.line!r}')
    bad = 0
    for src, args in lines:
        pkgs = packages(args, plan)
        if not pkgs: print(f'ok   {src}: nothing to install here'); continue
        ok, why = simulate(pkgs)
        print(f"{'ok  ' if ok else 'FAIL'} {src}: apt-get install {' '.join(pkgs)}" + ('' if ok else f'\n     -> {why}'))
        bad += not ok
    return 1 if bad else 0

if __name__ == '__main__': sys.exit(main())
