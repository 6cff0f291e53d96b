"""Fuzz controls of the top of the package: the graders and the scale-out part (Flower contract, strategies, sweeps).

Read by `tools/fuzz.py` (`control_modules`). Entry points that take whatever a student hands in (an answer, a function)
use the kind 'answer': every hostile answer must come back as feedback, never as an exception."""
from __future__ import annotations
import tempfile
import numpy as np

def _sweep_config_bad(v:dict) -> dict:
    "Malformed sweep configurations: a required key missing, an unknown key, an unknown dataset, a negative seed."
    return {'missing seed': {k: x for k, x in v.items() if k != 'seed'}, 'unknown key': {**v, 'colour': 'red'},
            'unknown dataset': {**v, 'dataset': 'no-such-data'}, 'negative seed': {**v, 'seed': -1},
            'zero clients': {**v, 'num_clients': 0}, 'str': 'digits', 'None': None}

def _message_bad(v) -> dict:
    "Malformed Flower replies: not a message at all."
    return {'int': 3, 'dict': {'stats': 1}, 'None': None}

KINDS = {   # kinds of this part's arguments: (malformed(v), equivalent(v), extra malformed(v))
    'sweep_config': (_sweep_config_bad, lambda v: {}, lambda v: {}),
    'sweep_configs': (lambda v: {'empty': [], 'str': 'digits', 'one bad': [*v, {'dataset': 'digits'}], 'None': None},
                      lambda v: {'tuple': tuple(v)}, lambda v: {}),
    'json_config': (lambda v: {'not JSON': {**v, 'f': len}, 'str': 'lr=0.1', 'None': None, 'list': [v]},
                    lambda v: {}, lambda v: {}),
    'configs': (lambda v: {'empty': [], 'str': 'digits', 'not dicts': [3], 'None': None, 'repeated': [*v, *v]},
                lambda v: {'tuple': tuple(v)}, lambda v: {}),
    'message': (_message_bad, lambda v: {}, lambda v: {}),
    'shape': (lambda v: {'one number': 3, 'three numbers': (2, 2, 2), 'zero': (0, 2), 'fractional': (1.5, 2),
                         'str': '2x2', 'negative': (-1, 2)}, lambda v: {'list': list(v)}, lambda v: {}),
}

VALID_MUTANTS = {   # a str subclass's characters are read with str's own methods: it names what its text names
    **{(f, 'selector'): {'str subclass'} for f in ('registry_key', 'sampling_name', 'sampling_level')},
    ('exercise', 'eid'): {'str subclass'}, ('grade', 'exercise'): {'str subclass'}}

def _replies() -> dict:
    "Flower replies of every kind a strategy meets: matrix, size and triplet stats, a missing handler."
    from flwr.app import Message, RecordDict, Error
    from flwr.clientapp import ClientApp
    from hetfl_explore.scale.contract import stats_record, STATS_KEY, STATS_QUERY
    from hetfl_explore.scale.strategies import AppGrid
    AppGrid(ClientApp(), 1)   # sets the run identity Flower's messages read, as Flower's runtime does
    ask = Message(RecordDict(), dst_node_id=1, message_type=STATS_QUERY)
    N = [[3, 1], [0, 2]]
    rec = lambda level: Message(RecordDict({STATS_KEY: stats_record(N, level)}), reply_to=ask)
    missing = Message(Error(code=0, reason="No query function registered with name 'stats'"), reply_to=ask)
    return dict(matrix=rec('matrix'), size=rec('size'), triplet=rec('triplet'), missing=missing)

def _scale_controls() -> dict:
    "Controls of the selector client contract, the sampling-only strategies and the sweeps."
    from flwr.clientapp import ClientApp
    from flwr.serverapp.strategy import FedProx
    from hetfl_explore.scale.contract import STATS_QUERY
    r, path = _replies(), tempfile.mkdtemp(prefix='fuzz-sweep-')
    cfg = dict(dataset='digits', selector='uniform', seed=0, num_clients=4, rounds=1, clients_per_round=2, device='cpu')
    return {
     'scale.contract': [
        ('stats_record', dict(counts=(np.array([[3, 1], [0, 2]]), 'counts'), level=('matrix', 'choice'))),
        ('stats_shape', dict(shape=((2, 2), 'shape'))),
        ('read_stats', dict(reply=(r['matrix'], 'message'), level=('matrix', 'choice'), shape=((2, 2), 'shape'))),
        ('missing_handler', dict(reply=(r['missing'], 'message'))),
        ('handler_error', dict(kind=(STATS_QUERY, 'choice'), why=('FedDiverse needs it', 'obj'))),
        ('register_stats', dict(app=(ClientApp(), 'obj'), counts=(lambda context: [[1, 0], [0, 1]], 'callable'))),
        ('register_loss', dict(app=(ClientApp(), 'obj'), loss=(lambda arrays, context: 0.5, 'callable'),
                               key=('loss', 'obj')))],
     'scale.strategies': [
        ('selector_spelling', dict(selector=('Pow_D', 'obj'))), ('registry_key', dict(selector=('pow-d', 'choice'))),
        ('sampling_name', dict(selector=('round_robin', 'choice'))),
        ('sampling_level', dict(selector=('feddiverse', 'choice'))),
        ('sampling', dict(strategy=(FedProx, 'obj'))),
        ('AppGrid', dict(app=(ClientApp(), 'obj'), num_nodes=(3, 'size'), run_config=({'lr': 0.1}, 'obj')))],
     'scale.sweeps': [
        ('check_address', dict(address=('auto', 'obj'))), ('task_name', dict(task=(len, 'callable'))),
        ('config_key', dict(config=({'lr': 0.1, 'tags': ['a']}, 'json_config'), task=(len, 'callable'))),
        ('fl_task', dict(config=(cfg, 'sweep_config'))),
        ('SweepStore', dict(path=path, configs=([cfg], 'configs'), task=(len, 'callable'))),
        ('run_sweep', dict(configs=([cfg], 'sweep_configs'), path=tempfile.mkdtemp(prefix='fuzz-sweep-'),
                           backend=('sequential', 'choice'), num_cpus=(1, 'size'), progress=False))],
    }

def _solved_lab(lab:str):
    "Record every exercise of `lab` as solved in the graders' session record (the state `assert_solved` passes)."
    from hetfl_explore.graders.core import load_labs, Feedback
    core = load_labs()
    for eid in core.exercises(lab): core.RESULTS[eid] = Feedback(eid, 'correct', 'right.')

def _grader_controls() -> dict:
    "Controls of the graders' helpers: the shared core, and each lab's reference computations and function checks."
    from hetfl_explore.graders.core import RIGHT
    _solved_lab('selection')
    L = np.array([[.5, .3, .2], [.1, .6, .3], [.3, .3, .4]])
    any_fn = lambda *a: 0.0
    return {
     'graders.core': [
        ('Feedback', dict(exercise=('selection.q1', 'obj'), status=('wrong', 'choice'), message=('try again', 'obj'),
                          hint=('look at k', 'obj'))),
        ('answer_problem', dict(answer=(0.5, 'answer'))), ('is_placeholder', dict(answer=(..., 'answer'))),
        ('assert_solved', dict(lab=('selection', 'choice'))),
        ('exercise', dict(eid=('fuzz.q1', 'choice'), hint=('look again', 'obj'), praise=(RIGHT, 'obj'))),
        ('first_mistake', dict(value=(0.5, 'real'), mistakes=([(0.5, 'halved')], 'obj'), tol=(1e-3, 'nonneg'))),
        ('grade', dict(exercise=('selection.q1', 'choice'), answer=(0.5, 'answer'))),
        ('matches', dict(value=(0.26, 'real'), want=(0.2562, 'real'), tol=(5e-3, 'nonneg'), min_decimals=(2, 'count'))),
        ('rubric_feedback', dict(eid=('fuzz.q1', 'obj'), text=('a short answer', 'answer'),
                                 rubric=({'k': ['k']}, 'obj'),
                                 min_words=(3, 'size'))),
        ('try_call', dict(f=(any_fn, 'answer')))],
     'graders.clustering': [
        ('cfl_first_split', dict(eps1=(0.4, 'nonneg'), eps2=(0.3, 'nonneg'), warmup=(3, 'count'), seed=(0, 'count'))),
        ('first_rejected_drift', dict(threshold=('literal', 'choice'), mode=('frozen', 'choice'), seed=(0, 'count'))),
        ('gpfl_first_move', dict(seed=(0, 'count'))),
        ('mcl_cluster_counts', dict(graph=('knn', 'choice'), seed=(0, 'count'))),
        ('threshold_problem', dict(f=(any_fn, 'answer'))), ('w1_problem', dict(w1=(any_fn, 'answer')))],
     'graders.crowd': [
        ('panel_ranking', dict(budget=(25.0, 'pos'))), ('shapley_panel_table', dict()),
        ('flows_problem', dict(compute_flows=(any_fn, 'answer'))),
        ('verifier_problem', dict(accept=(any_fn, 'answer')))],
     'graders.fairness': [('explorer_dp', dict(mix=(0.5, 'prob'), reliance=(0.0, 'prob')))],
     'graders.feddiverse': [
        ('explorer_stats', dict(selector=('uniform', 'choice'), noise=(0.0, 'nonneg'))),
        ('step3_scores', dict(L=(L, 'array'), kp=(0, 'count'), kc=(1, 'count')))],
     'graders.selection': [('sampler_problem', dict(pick=(any_fn, 'answer')))],
    }

def controls() -> dict:
    "group -> [(entry point, {argument: (valid value, kind)})] of the graders and the scale-out part."
    return {**_scale_controls(), **_grader_controls()}
