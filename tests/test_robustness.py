"""tools/robustness.py without running the sweep: what it finds, how it summarises, what makes it fail."""
import importlib.util, json, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location('robustness', ROOT / 'tools' / 'robustness.py')
cr = sys.modules['robustness'] = importlib.util.module_from_spec(spec); spec.loader.exec_module(cr)

def _nb(path, *sources):
    path.write_text(json.dumps(dict(cells=[dict(cell_type='code', source=s, metadata={}, outputs=[]) for s in sources],
                                    metadata={}, nbformat=4, nbformat_minor=5)))

def test_finds_notebooks_and_their_last_check_cell(tmp_path):
    _nb(tmp_path / 'a.ipynb', 'x = 1', "assert_learned('a', 1, 0)", 'y = 2', "assert_learned('b', 1, 0)", 'z = 3')
    _nb(tmp_path / 'b.ipynb', 'x = 1')                                           # no learned check
    _nb(tmp_path / 'core.ipynb', 'def assert_learned(name, value, bound): ...')   # the definition is not a check
    found = cr.notebook_sources(tmp_path)
    assert [(s.path.name, s.upto) for s in found] == [('a.ipynb', 3)]

def test_repository_sources_include_the_learned_test_and_skip_core():
    names = {s.path.name for s in cr.notebook_sources(ROOT / 'nbs')}
    assert '00_core.ipynb' not in names and '09_efficiency.ipynb' in names
    assert 'test_datasets.py' in {s.path.name for s in cr.test_sources(ROOT / 'tests')}

def _rec(name, value, bound=0.5): return dict(name=name, value=value, bound=bound, margin=value - bound)

def test_summary_worst_margin_and_missing_checks():
    runs = [cr.Run('nb', 0, 1, True, 1.0, [_rec('acc', 0.9), _rec('auc', 0.7)]),
            cr.Run('nb', 1, 2, True, 1.0, [_rec('acc', 0.6)]),                      # 'auc' is missing here
            cr.Run('nb', 2, 1, False, 1.0, [_rec('acc', 0.4)], error='boom')]       # a failed check
    rows = {r['name']: r for r in cr.summarise(runs)}
    assert rows['acc']['passed'] == 2 and rows['acc']['runs'] == 3
    assert rows['acc']['worst_margin'] == pytest.approx(-0.1) and (rows['acc']['worst_seed'], rows['acc']['worst_threads']) == (2, 1)
    assert rows['acc']['median_value'] == pytest.approx(0.6)
    assert rows['auc']['missing'] == [(1, 2), (2, 1)] and rows['auc']['passed'] == 1

def test_bad_options_are_refused(capsys):
    for argv in (['--seeds', '0'], ['--jobs', '0'], ['--threads', '0']):
        with pytest.raises(SystemExit): cr.main(argv)
        assert argv[0] in capsys.readouterr().err

def _record(sources, wall=1.0, seeds=(0,), threads=(1,)):
    rows = [dict(name=f'{s}-check', source=s) for s in sources]
    return dict(command=f'run {sources}', seeds=list(seeds), threads=list(threads), jobs=1, wall_s=wall, machine={},
                checks=rows, sources={s: {} for s in sources}, records=[dict(source=s, name='x') for s in sources],
                failures=[])

def test_update_replaces_only_the_sources_run_again(tmp_path):
    for s in 'abc': (tmp_path / s).write_text('')
    merged = cr.merge_records(_record(['a', 'b']), _record(['b', 'c'], wall=2.0), root=tmp_path)
    assert [r['source'] for r in merged['checks']] == ['a', 'b', 'c'] and set(merged['sources']) == {'a', 'b', 'c'}
    assert [c['command'] for c in merged['commands']] == ["run ['a', 'b']", "run ['b', 'c']"] and merged['wall_s'] == 3.0
    with pytest.raises(SystemExit, match='same --seeds'): cr.merge_records(_record(['a']), _record(['a'], seeds=(0, 1)), root=tmp_path)

def test_update_drops_sources_whose_file_is_gone(tmp_path):
    (tmp_path / 'kept').write_text(''); (tmp_path / 'new').write_text('')   # 'moved' no longer exists (renamed or split)
    merged = cr.merge_records(_record(['kept', 'moved']), _record(['new']), root=tmp_path)
    assert set(merged['sources']) == {'kept', 'new'} and {r['source'] for r in merged['checks'] + merged['records']} == {'kept', 'new'}
