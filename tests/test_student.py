"""The student edition (`make student`, tools/student.py): solution-free, current, and it runs top to bottom with every
check reporting "not attempted"; the grading helper turns saved check records into a CSV."""
import atexit, json, subprocess, sys
from pathlib import Path
import nbformat, pytest
from execnb.nbio import read_nb
from execnb.shell import CaptureShell
from conftest import ROOT

sys.path.insert(0, str(ROOT / 'tools'))
import student

LABS = sorted((ROOT / 'nbs' / 'labs').glob('lab_*.ipynb'))

@pytest.fixture(scope='module')
def edition(tmp_path_factory):
    "The student edition built afresh into a temporary folder (links resolved as if served from nbs/labs/student)."
    out = tmp_path_factory.mktemp('student')
    return student.build(student.SRC, out, served_from=student.OUT)

def test_every_lab_has_solutions_and_a_teacher_check():
    for p in LABS:
        roles = [student.role(c) for c in nbformat.read(p, as_version=4).cells]
        assert roles.count('solution') >= 6 and roles.count('teacher') == 1, f'{p.name}: {roles.count("solution")} solutions'

def test_edition_has_no_solutions(edition):
    assert [p.name for p in edition] == [p.name for p in LABS]
    for lab, p in zip(LABS, edition):
        nb = nbformat.read(p, as_version=4)
        text = '\n'.join(c.source for c in nb.cells)
        assert student.SOLUTION not in text and student.TEACHER not in text and 'assert_solved(' not in text
        assert nb.cells[0].source.splitlines()[0].endswith('(student edition)') and 'Student edition' in nb.cells[1].source
        solutions = [c.source for c in nbformat.read(lab, as_version=4).cells if student.role(c) == 'solution']
        placeholders = [c.source for c in nb.cells if c.source.startswith(student.PLACEHOLDER_NOTE)]
        assert len(placeholders) == len(solutions)
        for sol, ph in zip(solutions, placeholders):
            assert ph.splitlines()[1:] == [f'{n} = ...' for n in student.answer_names(sol)]

def test_committed_edition_is_current(edition):
    stale = [p.name for p in edition if not (student.OUT / p.name).exists() or (student.OUT / p.name).read_text() != p.read_text()]
    assert not stale and (student.OUT / '.notest').exists(), f'run `make student`: the student edition is out of date: {stale}'

def test_a_planted_solution_leak_is_caught(tmp_path):
    src = tmp_path / 'src'; src.mkdir()
    nb = nbformat.read(LABS[0], as_version=4)
    sol = next(c for c in nb.cells if student.role(c) == 'solution')
    sol.source = sol.source.replace(student.SOLUTION, '# solution (not the marker)')
    (src / LABS[0].name).write_text(student.dumps(nb))
    built = student.build(src, tmp_path / 'out')[0].read_text()
    assert 'answer_1 = ...' not in built   # unmarked, the solution stays: the marker is what removes it

@pytest.mark.parametrize('i', range(len(LABS)), ids=[p.stem for p in LABS])
def test_edition_runs_with_checks_not_attempted(edition, i, monkeypatch):
    monkeypatch.setattr(atexit, 'register', lambda f, *a, **k: f)
    p = edition[i]
    nb = read_nb(p)
    sh = CaptureShell(p)
    monkeypatch.chdir(student.OUT)
    sh.run_all(nb, exc_stop=True)
    recs = student.check_records(nb)
    from hetfl_explore.graders import exercises
    lab = recs[0]['exercise'].split('.')[0]
    assert [r['exercise'] for r in recs] == exercises(lab) and {r['status'] for r in recs} == {'not attempted'}

def test_grade_writes_one_row_per_notebook(tmp_path):
    cells = [nbformat.v4.new_code_cell(s) for s in ("from hetfl_explore.graders import grade",
             "grade('selection.q1', 0.125)", "grade('selection.q2', -1.5)", "grade('selection.q3', ...)")]
    nb = nbformat.v4.new_notebook(cells=cells); p = tmp_path / 'alice.ipynb'
    p.write_text(json.dumps(student.execute(nb, p, timeout=120)))
    csv = tmp_path / 'grades.csv'
    subprocess.run([sys.executable, str(ROOT / 'tools' / 'student.py'), 'grade', str(p), '--csv', str(csv)], check=True, cwd=ROOT)
    import pandas as pd
    row = pd.read_csv(csv).iloc[0]
    assert row['notebook'] == 'alice.ipynb' and row['selection.q1'] == 'correct' and row['selection.q2'] == 'wrong'
    assert row['selection.q3'] == 'not attempted' and row['selection.q4'] == 'not run'
    assert (row['correct'], row['attempted'], row['exercises']) == (1, 2, 7)
