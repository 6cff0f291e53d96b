"""Stop early, saying what is supported, when this Python or the installed torch/torchvision cannot run the package.

    python tools/verify_env.py            # the interpreter (before the virtual environment is made)
    .venv/bin/python tools/verify_env.py --installed   # also torch and torchvision inside the environment
"""
from __future__ import annotations
import argparse, configparser, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_PYTHON = (3, 13)   # newest Python the classifiers in setup.py list

def settings() -> configparser.SectionProxy:
    "The `[DEFAULT]` section of settings.ini."
    cfg = configparser.ConfigParser(delimiters=['=']); cfg.read(ROOT / 'settings.ini', encoding='utf-8')
    return cfg['DEFAULT']

def pinned(name:str, # a package name in constraints.txt
          ) -> str:
    "The version constraints.txt pins for `name` (the tested one)."
    m = re.search(rf'^{re.escape(name)}==(\S+)', (ROOT / 'constraints.txt').read_text(), re.M | re.I)
    return m.group(1) if m else '?'

def version_tuple(v:str) -> tuple: return tuple(int(x) for x in re.findall(r'\d+', v.split('+')[0])[:3])

def python_problem(info=sys.version_info) -> str|None:
    "A message when this interpreter is outside the supported range, else None."
    lo = version_tuple(settings()['min_python'])
    if not (lo <= tuple(info[:2]) <= MAX_PYTHON):
        return (f'Python {info[0]}.{info[1]} is not supported: use Python {lo[0]}.{lo[1]} to {MAX_PYTHON[0]}.{MAX_PYTHON[1]} '
                f'(e.g. `make test PYTHON=python3.11`; the tested set is Python 3.11)')
    return None

def torch_problem() -> str|None:
    "A message when torch or torchvision is missing, too old, or the pair does not load together, else None."
    need = dict(re.findall(r'(torch|torchvision)>=(\S+)', settings()['requirements']))
    pair = f"the tested pair is torch {pinned('torch')} + torchvision {pinned('torchvision')} (pip install -c constraints.txt -e .)"
    try:
        import torch, torchvision
    except Exception as e: return f'torch/torchvision cannot be imported ({type(e).__name__}: {e}); {pair}'
    for mod in (torch, torchvision):
        if version_tuple(mod.__version__) < version_tuple(need[mod.__name__]):
            return f'{mod.__name__} {mod.__version__} is too old (need >= {need[mod.__name__]}); {pair}'
    return None

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--installed', action='store_true', help='also check torch and torchvision')
    a = ap.parse_args(argv)
    msg = python_problem() or (torch_problem() if a.installed else None)
    if msg: print(f'verify_env: {msg}', file=sys.stderr); return 1
    return 0

if __name__ == '__main__': sys.exit(main())
