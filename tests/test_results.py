"""The saved results in data/results: each file has a registered target in tools/results.py and a sidecar saying how it
was made; the command line lists, and rejects bad input. Nothing is generated here (`make results-check` does that)."""
import importlib.util, json, re, subprocess, sys
import pandas as pd
import pytest
from conftest import ROOT

CHEAP_BUDGET_S = 180   # `make results-check` must regenerate the cheap set in about 3 minutes (1 thread)

def _load_tool():
    "tools/results.py as a module (importing it has no side effects: no torch, no environment change)."
    spec = importlib.util.spec_from_file_location('results_tool', ROOT/'tools'/'results.py')
    mod = sys.modules['results_tool'] = importlib.util.module_from_spec(spec)   # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod

tool = _load_tool()
RESULTS = ROOT/'data'/'results'
FILES = sorted(p for p in RESULTS.iterdir() if p.is_file() and not p.name.endswith(tool.META_SUFFIX))

def test_every_file_has_a_target():
    files, targets = {p.name for p in FILES}, {t.file for t in tool.TARGETS.values()}
    assert not files - targets, f"files in data/results without a target in tools/results.py: {sorted(files - targets)}"
    pending = {tool.TARGETS[n].file for n in tool.PENDING}
    assert not targets - files - pending, f"targets without a saved file (run `python tools/results.py NAME`): {sorted(targets - files - pending)}"
    assert not pending & files, f"{sorted(pending & files)}: saved, so no longer pending (remove them from tools/results.py PENDING)"

@pytest.mark.parametrize('path', FILES, ids=[p.name for p in FILES])
def test_sidecar(path):
    side = tool.meta_path(path)
    assert side.exists(), f"{side.name} missing: regenerate with `python tools/results.py {path.stem}`"
    meta = json.loads(side.read_text())
    assert not [k for k in tool.REQUIRED_META if k not in meta], f"{side.name} lacks {[k for k in tool.REQUIRED_META if k not in meta]}"
    assert not [k for k in tool.REQUIRED_VERSIONS if not meta['versions'].get(k)], f"{side.name}: versions incomplete"
    assert meta['target'] == path.stem and meta['command'] == f"python tools/results.py {path.stem}"
    assert meta['threads']['torch'] == tool.THREADS and meta['threads']['OMP_NUM_THREADS'] == str(tool.THREADS)
    assert meta['seeds'] == list(tool.TARGETS[path.stem].seeds) and meta['cpu']['model'] and meta['wall_seconds'] >= 0

def test_no_orphan_sidecars():
    orphans = [p.name for p in RESULTS.glob(f'*{tool.META_SUFFIX}') if not (RESULTS/(p.name[:-len(tool.META_SUFFIX)] + '.csv')).exists()]
    assert not orphans, f"sidecars without their file: {orphans}"

def test_list():
    r = subprocess.run([sys.executable, str(ROOT/'tools'/'results.py'), '--list'], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert all(name in r.stdout for name in tool.TARGETS), r.stdout

def test_cheap_set_fits_its_budget():
    cheap = [t for t in tool.TARGETS.values() if t.cheap]
    assert cheap and sum(t.cost_s for t in cheap) <= CHEAP_BUDGET_S
    assert [t.name for t in tool.resolve(['cheap'])] == [t.name for t in cheap]
    assert len(tool.resolve(['all', 'selection_shares'])) == len(tool.TARGETS)

@pytest.mark.parametrize('argv, message', [(['nope'], 'unknown target'), ([], 'name at least one target'),
                                           (['--keep', 'x', 'cheap'], '--keep, --strict, --draw and --all-seeds only go with --check'),
                                           (['--list', 'cheap'], '--list takes no target names')])
def test_bad_input(argv, message, monkeypatch):
    monkeypatch.setattr(tool.os, 'environ', dict(tool.os.environ))   # main() pins the thread variables: keep them local
    with pytest.raises(ValueError, match=message): tool.main(argv)

def test_compare_uses_seed_spread():
    t = tool.TARGETS['feddiverse_estimation']
    saved = pd.DataFrame(dict(dataset=['a'] * 3 + ['b'] * 3, seed=[0, 1, 2] * 2, MAE_CI=0.0, MAE_AI=[.1, .2, .3, .1, .1, .1],
                              MAE_SC=.1, euclid_mean=.2, euclid_sup=.5, fallbacks=1, clients=24, client_seconds=1.0))
    sigma = (0.1 ** 2 / 2) ** 0.5                   # pooled over the two datasets: RMS of 0.1 and 0
    factor = tool.SPREAD_K * (2 / 3) ** 0.5         # k standard errors of a difference of two 3-seed means
    near = saved.assign(MAE_AI=saved.MAE_AI + 0.98 * factor * sigma, client_seconds=9.0)
    far = saved.assign(MAE_AI=saved.MAE_AI + 1.02 * factor * sigma)
    ok = {r['column']: r['ok'] for r in tool.compare(t, saved, near)}
    assert all(ok.values()) and 'client_seconds' not in ok    # timings are never compared
    assert not {r['column']: r['ok'] for r in tool.compare(t, saved, far)}['MAE_AI']
    assert not tool.identical_rows(t, saved, near) and tool.identical_rows(t, saved, saved.assign(client_seconds=5.0))
    assert not tool.compare(t, saved, saved[saved.dataset == 'a'])[0]['ok']   # a missing group fails

CHECK_ALL_BUDGET_S = 12 * 60   # `make results-check` (CI: every file, whole or its drawn seeds and part) in about 10 minutes
FEW_SEEDS = {   # trained files with fewer than MIN_SEEDS seeds: no chapter may assert a comparison between arms on them
    'feddiverse_estimation': 'descriptive estimation errors per stand-in',
    'modelhet_lira': 'seeds 0-2: old vs new shadow design, no difference stated',
    'fairness_explorer': 'seeds 0-2: an illustration for reading trends, no comparison stated'}

PARTS = {'feddiverse_teaching': 5, 'fairness_grid': 3}   # values of each grid's `check_part` column in its saved file

def test_check_of_every_file_fits_its_budget():
    assert {n: tool.parts(t) for n, t in tool.TARGETS.items() if t.check_part} == PARTS
    assert sum(t.cost_check(tool.parts(t)) for t in tool.TARGETS.values()) <= CHECK_ALL_BUDGET_S
    assert all(t.check_seeds is None or 1 <= t.check_seeds < len(t.seeds) for t in tool.TARGETS.values())

def test_trained_targets_run_seeds_0_to_s():
    from hetfl_explore.foundation.core import MIN_SEEDS
    for t in tool.TARGETS.values():
        assert t.seeds == tuple(range(len(t.seeds))), f"{t.name}: seeds {t.seeds} are not 0..S-1"
        if len(t.seeds) > 1 and t.name not in FEW_SEEDS: assert len(t.seeds) >= MIN_SEEDS, t.name

@pytest.mark.parametrize('name', [n for n, t in tool.TARGETS.items() if len(t.seeds) > 1 and n not in tool.PENDING])
def test_saved_file_holds_every_seed_of_every_group(name):
    t, df = tool.TARGETS[name], pd.read_csv(RESULTS/tool.TARGETS[name].file)
    assert set(df.seed.astype(int)) == set(t.seeds), f"{t.file}: seeds {sorted(set(df.seed))}, target {t.seeds}"
    keys = [c for c in ('dataset', 'method', 'fl', 'level', 'rho', 'n_anti', 'n_large') if c in df.columns]
    per = df.groupby(keys).seed.nunique()
    assert (per == len(t.seeds)).all(), f"{t.file}: groups missing seeds:\n{per[per != len(t.seeds)]}"

def test_draw_is_a_stated_random_subset():
    t = tool.TARGETS['feddiverse_cmnist']
    a, b = tool.draw_seeds(t, 1), tool.draw_seeds(t, 2)
    assert len(a) == t.check_seeds and set(a) <= set(t.seeds) and a == tuple(sorted(a))
    assert a == tool.draw_seeds(t, 1) and a != b                       # repeatable by its draw seed; another draw differs
    assert tool.draw_seeds(tool.TARGETS['selection_shares'], 1) is None  # checked whole

def test_a_grid_check_draws_one_dataset_and_compares_its_rows_only():
    t = tool.TARGETS['fairness_grid']
    saved = pd.read_csv(RESULTS/t.file)
    part = tool.draw_part(t, 1, saved)
    assert part[0] == 'dataset' and part[1] in set(saved.dataset) and part == tool.draw_part(t, 1, saved)
    assert len({tool.draw_part(t, d, saved)[1] for d in range(20)}) == saved.dataset.nunique()   # every dataset can be drawn
    seeds = tool.draw_seeds(t, 1)
    mine = tool.seed_rows(saved, seeds, part)
    assert set(mine.dataset) == {part[1]} and set(mine.seed) == set(seeds)
    assert all(r['ok'] for r in tool.compare(t, saved, mine, seeds, part))            # its own rows: within tolerance
    assert not tool.compare(t, saved, mine.iloc[1:], seeds, part)[0]['ok']             # a missing row fails
    assert tool.draw_part(tool.TARGETS['feddiverse_cmnist'], 1, saved) is None          # no part: every dataset

def test_compare_a_subset_of_seeds():
    t = tool.TARGETS['feddiverse_cmnist']
    rows = [dict(dataset='CMNIST_GSC', method=m, fl='FedAvgM', seed=s, wga=50.0 + s % 2 * 10, accuracy=70.0, share_CI=.3, share_AI=.3,
                 share_SC=.4, rounds=40, seconds=1.0) for m in ('Uniform', 'FedDiverse') for s in t.seeds]
    saved = pd.DataFrame(rows)
    sigma = saved.groupby('method').wga.std(ddof=1).iloc[0]                          # the spread of the whole file
    sub = (3, 8)
    new = saved[saved.seed.isin(sub)].copy()
    tol = tool.SPREAD_K * (2 / len(sub)) ** 0.5 * sigma
    ok = lambda d: {r['column']: r['ok'] for r in tool.compare(t, saved, d, sub)}['wga']
    assert ok(new.assign(wga=new.wga + 0.98 * tol)) and not ok(new.assign(wga=new.wga + 1.02 * tol))
    assert tool.identical_rows(t, tool.seed_rows(saved, sub), new.assign(seconds=9.0))

# ---- chapters state comparisons only through assert_paired / assert_not_significant ----------------------------------
CHAPTERS = ('feddiverse/22_experiments', 'fairness/41_experiments', 'modelhet/32_experiments', 'tutorials/feddiverse_experiments',
            'tutorials/fairness_lab', 'tutorials/model_heterogeneity_privacy', 'tutorials/selection_comparison')
READS = re.compile(r"results_path\('(?!selection_shares|feddiverse_overhead|feddiverse_estimation)|load_teaching\(|load_results\(")
RANKING = re.compile(r"\.rank\(|nlargest\(|nsmallest\(|idxmax\(|idxmin\(|is_monotonic|\.max\(\)\s*==|\.min\(\)\s*==")
ASSERTS = re.compile(r"^\s*(assert\b|test_eq\(|test_close\()")

def saved_result_names(cells:list) -> set:
    "Names a chapter binds to trained saved results, directly or through other such names (one pass per cell, in order)."
    names = set()
    for src in cells:
        for line in src.splitlines():
            m = re.match(r"^\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=(?!=)(.*)", line)
            if m and (READS.search(m[2]) or any(re.search(rf'\b{n}\b', m[2]) for n in names)):
                names |= {n.strip() for n in m[1].split(',')}
    return names

@pytest.mark.parametrize('chapter', CHAPTERS)
def test_chapter_asserts_no_ranking_of_saved_results(chapter):
    "An assert on trained saved results never ranks arms: comparisons go through assert_paired (>= 10 seeds, beyond 2 SE)."
    nb = json.loads((ROOT/'nbs'/f'{chapter}.ipynb').read_text())
    cells = [''.join(c['source']) for c in nb['cells'] if c['cell_type'] == 'code']
    names = saved_result_names(cells)
    bad = [line.strip() for src in cells for line in src.splitlines()
           if ASSERTS.match(line) and RANKING.search(line) and any(re.search(rf'\b{n}\b', line) for n in names)]
    assert not bad, f"{chapter}: asserts that rank arms of saved results instead of assert_paired:\n" + '\n'.join(bad)

def test_assert_paired_refuses_fewer_than_10_seeds():
    from hetfl_explore.foundation.core import paired_differences, assert_paired, MIN_SEEDS
    runs = pd.DataFrame([dict(arm=a, seed=s, v=float(s) + 5 * (a == 'x')) for a in 'xy' for s in range(MIN_SEEDS - 1)])
    with pytest.raises(AssertionError, match=f'rests on {MIN_SEEDS - 1} seeds'):
        assert_paired(paired_differences(runs, 'arm', 'x', 'y', 'v').iloc[0], 1)
