"""What a module can do does not depend on what else was imported, foundation imports no part above it, and a word
means one thing.

- No module adds a method (`@patch`, `@patch_to`) to a class that another module defines: a class has all of its
  methods as soon as its own module is imported (the FedDiverse selectors' fast `select_rounds` included).
- `results_path` finds the committed results without importing the package.
- Every public `check_*` function returns its (cleaned) value or raises: called with its valid fuzz control, none
  returns None.
"""
from __future__ import annotations
import ast, os, subprocess, sys
from pathlib import Path
from conftest import ROOT

sys.path.insert(0, str(ROOT / 'tools'))
import fuzz

PKG = ROOT / 'hetfl_explore'
PATCHERS = ('patch', 'patch_to')

def _name(e) -> str:
    "The bare name of a `Name` or `Attribute` expression ('' for anything else)."
    return e.id if isinstance(e, ast.Name) else e.attr if isinstance(e, ast.Attribute) else ''

def class_names(e) -> list[str]:
    "The class names in a type expression: `C`, `m.C`, `C | D`, `(C, D)`, `Union[C, D]` or the string 'C'."
    if isinstance(e, (ast.Name, ast.Attribute)): return [_name(e)]
    if isinstance(e, ast.BinOp): return class_names(e.left) + class_names(e.right)
    if isinstance(e, ast.Tuple): return [n for x in e.elts for n in class_names(x)]
    if isinstance(e, ast.Subscript): return class_names(e.slice)
    if isinstance(e, ast.Constant) and isinstance(e.value, str):
        return class_names(ast.parse(e.value, mode='eval').body)
    return []

def patched_classes(tree:ast.Module) -> list[tuple[str, int]]:
    "(class, line) of every method the module adds with `@patch` (the first argument's type) or `@patch_to(C)`."
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)): continue
        for d in node.decorator_list:
            call = d if isinstance(d, ast.Call) else None
            kind = _name(call.func if call else d)
            if kind not in PATCHERS: continue
            args = node.args.posonlyargs + node.args.args
            if kind == 'patch_to': targets = call.args[:1] if call else []
            else: targets = [args[0].annotation] if args and args[0].annotation else []
            out += [(c, node.lineno) for t in targets for c in class_names(t)]
    return out

def foreign_patches(source:str, where:str='<module>') -> list[str]:
    "Every `@patch` of a class that the module does not define itself."
    tree = ast.parse(source)
    own = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    return [f'{where}:{line} patches {c}, a class of another module'
            for c, line in patched_classes(tree) if c not in own]

def test_no_module_patches_a_class_of_another_module():
    bad = [v for f in sorted(PKG.rglob('*.py'))
           for v in foreign_patches(f.read_text(encoding='utf-8'), f.relative_to(ROOT))]
    assert bad == [], '\n'.join(bad)

def test_the_patch_scan_sees_every_form():
    own = "class A: pass\n@patch\ndef f(self:A): pass\n@patch_to(A)\ndef g(self): pass\n"
    assert foreign_patches(own) == []
    other = ("from .x import B, C\n@patch\ndef f(self:B): pass\n@fastcore.basics.patch_to(C)\ndef g(self): pass\n"
             "@patch(as_prop=True)\ndef h(self:B|C): pass\n@patch\ndef i(self:'B'): pass\n")
    assert foreign_patches(other) == ['<module>:3 patches B, a class of another module',
                                      '<module>:5 patches C, a class of another module',
                                      '<module>:7 patches B, a class of another module',
                                      '<module>:7 patches C, a class of another module',
                                      '<module>:9 patches B, a class of another module']

SELECTOR_ALONE = """
import numpy as np
from hetfl_explore.feddiverse.selector import FedDiverseSelector, LiteralFedDiverseSelector, diversity_round
from hetfl_explore.engine.protocol import Selector, make_view
T = np.random.default_rng(0).random((12, 3))
for cls in (FedDiverseSelector, LiteralFedDiverseSelector):
    assert cls.select_rounds is not Selector.select_rounds, cls
    assert cls.select_rounds.__module__ == 'hetfl_explore.feddiverse.selector', cls.select_rounds.__module__
sel = FedDiverseSelector(T, 'official-code')
sel.reset(12, 0)
fast = sel.select_rounds(make_view(12), 5, 20, np.random.default_rng(3))
slow = Selector.select_rounds(sel, make_view(12), 5, 20, np.random.default_rng(3))
assert fast.shape == (20, 12) and (fast.sum(1) == 6).all() and (fast == slow).all()
rng = np.random.default_rng(4)
first = np.zeros(12, np.int64)
first[diversity_round(T, 5, rng, 0, **sel.options)[0]] = 1
assert (first == sel.select_rounds(make_view(12), 5, 1, np.random.default_rng(4))[0]).all()
print('ok')
"""

def run_alone(code:str, cwd:Path) -> str:
    "Run `code` in a fresh interpreter that finds this checkout first; its output (fails on any error)."
    env = {**os.environ, 'PYTHONPATH': str(ROOT), 'OMP_NUM_THREADS': '1'}
    res = subprocess.run([sys.executable, '-c', code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout

def test_the_selector_module_alone_gives_the_fast_rounds(tmp_path):
    "Importing the selector module: both selectors have their own `select_rounds`, equal to round-by-round play."
    assert run_alone(SELECTOR_ALONE, tmp_path).strip() == 'ok'

RESULTS_ALONE = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location('core_alone', {core!r})
core = importlib.util.module_from_spec(spec)
spec.loader.exec_module(core)
print(core.results_path('x.csv'))
print(any(m == 'hetfl_explore' or m.startswith('hetfl_explore.') for m in sys.modules))
"""

def test_results_path_does_not_import_the_package(tmp_path):
    "`foundation.core` loaded on its own, from another folder: the checkout's data/results, and no package import."
    path, imported = run_alone(RESULTS_ALONE.format(core=str(PKG / 'foundation' / 'core.py')), tmp_path).split()
    assert Path(path) == ROOT / 'data' / 'results' / 'x.csv' and imported == 'False'

def test_foundation_core_imports_no_part_of_the_package():
    names = []
    for n in ast.walk(ast.parse((PKG / 'foundation' / 'core.py').read_text(encoding='utf-8'))):
        if isinstance(n, ast.Import): names += [a.name for a in n.names]
        elif isinstance(n, ast.ImportFrom): names.append('.' * n.level + (n.module or ''))
    assert not [n for n in names if n.startswith('.') or n.split('.')[0] == 'hetfl_explore'], names

def check_functions() -> dict:
    "Qualified name -> function of every public `check_*` function of the package."
    return {q: f for q, f in fuzz.public_callables().items() if q.rsplit('.', 1)[1].startswith('check_')}

def flower_controls() -> dict:
    "Valid calls of the checks that the Flower adapter's own tests fuzz (`fuzz.FLOWER_PARTS`)."
    from hetfl_explore.engine.protocol import UniformSelector
    return {'hetfl_explore.scale.flower.check_hostable': dict(selector=UniformSelector())}

def test_every_check_returns_its_value_or_raises():
    "A `check_*` validates and hands back the cleaned value: its valid control never returns None."
    manual = fuzz._controls()
    controls = {f'hetfl_explore.{g}.{n}': spec for table in (manual, fuzz.auto_controls(manual))
                for g, entries in table.items() for n, spec in entries} | flower_controls()
    checks = check_functions()
    assert len(checks) >= 40 and 'hetfl_explore.foundation.core.check_distribution' in checks
    assert sorted(set(checks) - set(controls)) == []
    returned_none = []
    for q, fn in sorted(checks.items()):
        out = fn(**{k: (v[0] if isinstance(v, tuple) else v) for k, v in controls[q].items()})
        if out is None: returned_none.append(q)
    assert returned_none == []

def test_renamed_words_are_gone():
    "The two functions whose `check_` name promised a cleaned value are named for what they do."
    from hetfl_explore.foundation import data
    from hetfl_explore.crowd import pki
    from hetfl_explore.clustering import profiles
    assert not hasattr(data, 'check_published') and callable(data.assert_published)
    assert not hasattr(pki, 'check_certificate') and callable(pki.certificate_problem)
    assert not hasattr(profiles, 'check_prob')
