"""The package reads like a book: short code cells, public citations only, and documented signatures.

Each test lists every offender, so a failure says exactly where to look.
"""
import importlib, inspect, json, pkgutil, re
from pathlib import Path
import pytest
from fastcore.docments import docments
import hetfl_explore
from conftest import ROOT

MAX_CELL_LINES = 40    # the longest code cell allowed (the style guide aims at about 30)
PRIVATE_CITATION = re.compile(r'spec §|FLAG §|\bl\. ?[0-9]|\bll\. ?[0-9]|\bspec/|shared/(spec|seeds)')
NBS = sorted(p for p in (ROOT / 'nbs').rglob('*.ipynb') if '.ipynb_checkpoints' not in p.parts)

def cells(kind=None):
    "Every `(notebook, index, source)` of the notebooks, optionally only cells of one kind."
    for nb in NBS:
        for i, c in enumerate(json.loads(nb.read_text(encoding='utf-8'))['cells']):
            if kind is None or c['cell_type'] == kind: yield nb.relative_to(ROOT / 'nbs'), i, ''.join(c['source'])

def test_code_cells_are_short():
    long = [f'{nb} cell {i}: {n} lines' for nb, i, s in cells('code') if (n := len(s.splitlines())) > MAX_CELL_LINES]
    assert not long, f'{len(long)} code cells exceed {MAX_CELL_LINES} lines:\n' + '\n'.join(long)

def test_citations_are_public():
    bad = [f'{nb} cell {i}: ...{s[max(0, m.start() - 40):m.end() + 40]!r}...' for nb, i, s in cells() for m in PRIVATE_CITATION.finditer(s)]
    assert not bad, f'{len(bad)} private citations (cite the public source instead):\n' + '\n'.join(bad)

SCRIPT_COMMENT = re.compile(r'^# #|^#$|^# ', re.M)   # a markdown line left commented out as in a percent-format script

def test_markdown_is_not_commented_out():
    "Markdown written as `# ` comments (a script converted without its prefixes) renders every paragraph as a heading; only a notebook's title is `# `."
    md, first = list(cells('markdown')), {}
    for nb, i, _ in md: first.setdefault(nb, i)                    # the title cell of each notebook
    bad = [f'{nb} cell {i}: {s[:60]!r}' for nb, i, s in md if i != first[nb] and SCRIPT_COMMENT.search(s)]
    assert not bad, f'{len(bad)} markdown cells read as commented-out script lines:\n' + '\n'.join(bad)

def public_modules():
    "Every module of the package except the generated index."
    for m in pkgutil.walk_packages(hetfl_explore.__path__, 'hetfl_explore.'):
        if not m.name.endswith('_modidx'): yield importlib.import_module(m.name)

def exported(mod):
    "The functions and classes a module exports (its `__all__`) that it defines itself."
    for name in getattr(mod, '__all__', []):
        obj = getattr(mod, name)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and getattr(obj, '__module__', '') == mod.__name__: yield name, obj

def undocumented_params(f) -> list[str]:
    "Parameters of `f` (self, *args, **kwargs excluded) without a docments comment."
    try: d = docments(f, full=True)
    except (TypeError, ValueError, OSError): return []
    skip = {'self', 'cls', 'return'}
    sig = inspect.signature(f).parameters
    return [p for p, v in d.items() if p not in skip and p in sig and sig[p].kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD) and not v['docment']]

def test_every_exported_callable_has_docments():
    bad = []
    for mod in public_modules():
        for name, obj in exported(mod):
            f = obj.__init__ if inspect.isclass(obj) and '__init__' in vars(obj) else obj
            if inspect.isclass(obj) and '__init__' not in vars(obj): continue      # dataclasses: fields are documented in the class
            if (miss := undocumented_params(f)): bad.append(f'{mod.__name__}.{name}: {", ".join(miss)}')
    assert not bad, f'{len(bad)} exported callables with undocumented parameters:\n' + '\n'.join(bad)

def test_every_public_method_has_a_docstring():
    bad = []
    for mod in public_modules():
        for name, cls in exported(mod):
            if not inspect.isclass(cls): continue
            for m, f in vars(cls).items():
                if m.startswith('_') or not (inspect.isfunction(f) or isinstance(f, property)): continue
                fn = f.fget if isinstance(f, property) else f
                if not (fn.__doc__ or '').strip(): bad.append(f'{mod.__name__}.{name}.{m}')
    assert not bad, f'{len(bad)} public methods without a docstring:\n' + '\n'.join(bad)
