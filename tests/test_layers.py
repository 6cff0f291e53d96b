"""The architecture rule: the package's parts are layers, and a part imports only from itself and the parts below it.

The order is written once, in `hetfl_explore.LAYERS` (the contributing page explains it); this test parses every
module's imports and fails on an import that runs upwards (or sideways between parts of the same level).
"""
import ast
from pathlib import Path
import pytest
import hetfl_explore
from conftest import ROOT

PKG = ROOT / 'hetfl_explore'

def part_of(module:str) -> str:
    "The part (subpackage) a dotted module name of the package belongs to."
    return module.split('.')[1] if module.count('.') >= 1 else ''

def imported_parts(path:Path) -> set[str]:
    "The parts of `hetfl_explore` that the module at `path` imports (absolute or relative imports)."
    mod = '.'.join(path.relative_to(ROOT).with_suffix('').parts)
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        if isinstance(node, ast.ImportFrom):
            if node.level:                      # relative: resolve against this module's package
                base = mod.split('.')[:-node.level]
                name = '.'.join(base + ([node.module] if node.module else []))
            else: name = node.module or ''
            names = [name] if name != 'hetfl_explore' else [f'hetfl_explore.{a.name}' for a in node.names]
        elif isinstance(node, ast.Import): names = [a.name for a in node.names]
        else: continue
        out |= {part_of(n) for n in names if n.startswith('hetfl_explore.')}
    return out - {''}

def violations(pkg:Path=PKG, layers=hetfl_explore.LAYERS) -> list[str]:
    "Every import of a part at the same or a higher level than the importing module's part."
    level = {p: i for i, group in enumerate(layers) for p in group.split()}
    bad = []
    for f in sorted(pkg.rglob('*.py')):
        own = part_of('.'.join(f.relative_to(ROOT).with_suffix('').parts))
        if own not in level: continue
        for other in imported_parts(f):
            if other != own and (other not in level or level[other] >= level[own]):
                bad.append(f'{f.relative_to(ROOT)} imports {other} (level {level.get(other)}) from {own} (level {level[own]})')
    return bad

def test_every_part_is_in_a_layer():
    parts = {p.name for p in PKG.iterdir() if p.is_dir() and (p / '__init__.py').exists()}
    assert parts == {p for g in hetfl_explore.LAYERS for p in g.split()}

def test_no_upward_imports():
    assert violations() == []

CHAPTER_PARTS = hetfl_explore.LAYERS[3].split()   # level 3, the chapters: each trains on the engine

def test_each_chapter_part_stands_on_the_engine():
    "Every part of level 3 imports the engine (its federated runs are `Simulation` runs)."
    lacking = [p for p in CHAPTER_PARTS if 'engine' not in set().union(*map(imported_parts, (PKG / p).glob('*.py')))]
    assert lacking == []

def test_a_planted_upward_import_fails(tmp_path):
    import shutil
    pkg = tmp_path / 'hetfl_explore'; shutil.copytree(PKG, pkg, ignore=shutil.ignore_patterns('__pycache__'))
    target = pkg / 'foundation' / 'hetero.py'
    target.write_text(target.read_text() + '\nfrom ..widgets.editor import MatrixEditor\n')
    import test_layers as T
    old = T.ROOT; T.ROOT = tmp_path
    try: bad = violations(pkg)
    finally: T.ROOT = old
    assert bad == ['hetfl_explore/foundation/hetero.py imports widgets (level 5) from foundation (level 0)'], bad

PATCH_DECORATORS = {'patch', 'patch_to', 'delegates'}   # decorators that add a method to a class (or only change a signature)

def _decorator_name(d) -> str:
    "The bare name of a decorator expression (`patch`, `patch(as_prop=True)`, `patch_to(C)` -> 'patch' / 'patch_to')."
    d = d.func if isinstance(d, ast.Call) else d
    return d.id if isinstance(d, ast.Name) else d.attr if isinstance(d, ast.Attribute) else ''

def defined_public_names(path:Path) -> set[str]:
    "The public names a module defines at its top level (functions, classes, constants); methods added with `@patch` excluded."
    out = set()
    for node in ast.parse(path.read_text(encoding='utf-8')).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            if not ({_decorator_name(d) for d in node.decorator_list} & {'patch', 'patch_to'}): out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return {n for n in out if not n.startswith('_')}

def duplicate_public_names(pkg:Path=PKG) -> dict[str, list[str]]:
    "Every public name defined by more than one module of the package, with the modules that define it."
    where = {}
    for f in sorted(pkg.rglob('*.py')):
        if f.name in ('_modidx.py', '__init__.py'): continue
        for n in defined_public_names(f): where.setdefault(n, []).append(str(f.relative_to(pkg)))
    return {n: fs for n, fs in sorted(where.items()) if len(fs) > 1}

def test_public_names_are_unique():
    "One word, one meaning: no two modules define the same public name."
    assert duplicate_public_names() == {}

def private_imports(pkg:Path=PKG) -> list[str]:
    "Every import of a private `_name` from another module (of the package or a third party)."
    bad = []
    for f in sorted(pkg.rglob('*.py')):
        for node in ast.walk(ast.parse(f.read_text(encoding='utf-8'))):
            if isinstance(node, ast.ImportFrom):
                bad += [f'{f.relative_to(pkg)}: from {"." * node.level}{node.module or ""} import {a.name}'
                        for a in node.names if a.name.startswith('_') and not a.name.startswith('__')]
    return bad

def test_no_private_imports_across_modules():
    assert private_imports() == []

def test_planted_duplicates_and_private_imports_fail(tmp_path):
    (tmp_path / 'a.py').write_text('def shared(): pass\nLIMIT = 1\n')
    (tmp_path / 'b.py').write_text('from .a import _hidden\nLIMIT = 2\n@patch\ndef method(self: int): pass\n')
    (tmp_path / 'c.py').write_text('@patch\ndef method(self: str): pass\nclass shared: pass\n')
    assert duplicate_public_names(tmp_path) == {'LIMIT': ['a.py', 'b.py'], 'shared': ['a.py', 'c.py']}
    assert private_imports(tmp_path) == ['b.py: from .a import _hidden']
