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
