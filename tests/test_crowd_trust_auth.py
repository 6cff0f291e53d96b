"""Authenticated aggregation (Tahir, 2025, ch. 7): the ABAC policy engine (Table 7.1), the PKI with `cryptography`,
and the server's checks; every attack is rejected for the right reason, and honest updates never are."""
from datetime import datetime, timedelta, timezone
import numpy as np
import pytest
import torch
from hetfl_explore.crowd.abac import parse_policy, PolicySyntaxError, Request, EXAMPLE_POLICY
from hetfl_explore.crowd.pki import (CertificateAuthority, new_key, make_csr, sign_update, verify_update,
                                     certificate_problem, SignedUpdate, REASONS, session_key, seal, unseal, serialise,
                                     attributes_of)
from hetfl_explore.crowd.authenticated import AuthenticatedServer, run_authenticated, deserialise

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
GOOD = dict(ram_gb=6, disk_gb=20, full_disk_encryption=True, protocols=['TLS'], encryption=['AES-256'], trust=0.9, os_patch_age_days=[0])

@pytest.mark.parametrize('text,line,col', [
    ('rule a: permit register\n    ram_gb > 4', 2, 12), ('rule a: allow register\n  x = 1', 1, 9), ('  x = 1', 1, 1),
    ('rule a: permit register\n  x subset {a, b', 2, 12), ('rule a: permit register\n  host.ram >= 1', 2, 3),
    ('rule a: permit register\n  x = 1\nrule a: deny register\n  y = 2', 3, 6), ('rule a: permit register', 1, 1),
    ('rule a: permit register\n  forall v in s: w = 1', 2, 18), ('rule a: permit register\n  x = 1 2', 2, 9)])
def test_parse_errors_give_line_and_column(text, line, col):
    with pytest.raises(PolicySyntaxError) as e: parse_policy(text)
    assert (e.value.line, e.value.column) == (line, col) and f'line {line}, column {col}' in str(e.value)

def test_decisions_follow_table_7_1_and_the_combining_rules():
    pol = parse_policy(EXAMPLE_POLICY)
    assert pol.decide(Request(GOOD, 'register')).decided_by == 'hardware'
    for bad in (dict(ram_gb=3), dict(protocols=['FTP']), dict(encryption=['DES']), dict(full_disk_encryption=False)):
        d = pol.decide(Request({**GOOD, **bad}, 'register'))
        assert not d.permit and d.decided_by == 'default deny'
    task = dict(min_trust=0.8)
    assert pol.decide(Request(GOOD, 'participate', task, dict(maintenance=False))).permit
    assert not pol.decide(Request({**GOOD, 'encryption': ['AES-256', 'DES']}, 'participate', task, dict(maintenance=False))).permit  # subset
    assert not pol.decide(Request({**GOOD, 'os_patch_age_days': [0, 3]}, 'participate', task, dict(maintenance=False))).permit       # forall
    d = pol.decide(Request(GOOD, 'participate', task, dict(maintenance=True)))
    assert not d.permit and d.decided_by == 'maintenance' and '✓ env.maintenance = true' in d.explain()
    assert parse_policy(EXAMPLE_POLICY.replace('deny-overrides', 'permit-overrides')).decide(Request(GOOD, 'participate', task, dict(maintenance=True))).permit
    missing = pol.decide(Request(GOOD, 'participate'))                        # no resource attributes: deny, reason in the trace
    assert not missing.permit and "attribute 'resource.min_trust' missing" in missing.explain()

@pytest.fixture(scope='module')
def world():
    pol = parse_policy(EXAMPLE_POLICY); ca = CertificateAuthority(policy=pol, now=T0); ids = {}
    for name in ('alice', 'bob', 'carol'):
        k = new_key(); ids[name] = (k, ca.enrol(make_csr(k, name, GOOD), now=T0)[0])
    ca.trust.set('carol', 0.5)                                                  # the server's score, not a declared one
    return pol, ca, ids

def server(world): pol, ca, _ = world; return AuthenticatedServer(ca, 'task42', pol, dict(min_trust=0.8))
UPDATE = (torch.linspace(0, 1, 50), torch.full((50,), 0.1))

def test_register_denied_gets_no_certificate(world):
    _, ca, _ = world
    cert, d = ca.enrol(make_csr(new_key(), 'weak', {**GOOD, 'ram_gb': 1}), now=T0)
    assert cert is None and not d.permit

def test_each_attack_is_rejected_with_its_reason(world):
    pol, ca, ids = world; srv = server(world)
    old = sign_update(*ids['alice'], 'task42', 1, UPDATE); assert srv.receive([old], 1, T0) == [old]
    good = sign_update(*ids['bob'], 'task42', 2, UPDATE)
    one_byte = bytes([good.payload[0] ^ 0xFF]) + good.payload[1:]
    rogue_ca = CertificateAuthority('hetfl-ca', now=T0); mk = new_key()
    attacks = {
        'signature': sign_update(new_key(), ids['alice'][1], 'task42', 2, UPDATE),                 # forged: wrong key for the certificate
        'signature ': SignedUpdate(**{**good.__dict__, 'payload': one_byte}),                       # one byte tampered
        'round': old,                                                                              # replay from round 1
        'task': sign_update(*ids['bob'], 'task7', 2, UPDATE),                                      # another task's update
        'policy': sign_update(*ids['carol'], 'task42', 2, UPDATE),                                 # wrong attributes (trust 0.5)
        'not_ca': sign_update(mk, rogue_ca.enrol(make_csr(mk, 'alice', GOOD), now=T0)[0], 'task42', 2, UPDATE),
        'identity': SignedUpdate(**{**sign_update(*ids['bob'], 'task42', 2, UPDATE).__dict__, 'client_id': 'alice'}),
    }
    assert srv.receive(list(attacks.values()), 2, T0 + timedelta(minutes=2)) == []
    assert [r['reason'] for r in srv.rejections] == [REASONS[k.strip()] for k in attacks]
    assert srv.receive([good], 2, T0) == [good] and srv.receive([good], 2, T0) == []               # same nonce twice
    assert srv.rejections[-1]['reason'] == REASONS['nonce']

def test_expired_and_revoked_certificates_are_rejected(world):
    pol, _, _ = world; ca = CertificateAuthority(policy=pol, now=T0); k = new_key()
    cert = ca.enrol(make_csr(k, 'dave', GOOD), now=T0)[0]
    srv = AuthenticatedServer(ca, 'task42', pol, dict(min_trust=0.8))
    assert srv.receive([sign_update(k, cert, 'task42', 1, UPDATE)], 1, T0 + ca.validity + timedelta(seconds=1)) == []
    assert srv.rejections[-1]['reason'] == REASONS['expired']
    ca.revoke(cert, T0)
    assert srv.receive([sign_update(k, cert, 'task42', 2, UPDATE)], 2, T0) == [] and srv.rejections[-1]['reason'] == REASONS['revoked']
    assert certificate_problem(cert, ca.cert, ca.crl(T0), T0) == REASONS['revoked']

def test_signature_covers_every_field(world):
    _, _, ids = world; u = sign_update(*ids['alice'], 'task42', 3, UPDATE)
    assert verify_update(u)
    for field, value in dict(task_id='task43', round=4, client_id='bob', nonce=b'x' * 16, payload=u.payload[:-1] + b'\0').items():
        assert not verify_update(SignedUpdate(**{**u.__dict__, field: value})), field
    assert torch.equal(deserialise(u.payload)[0], UPDATE[0]) and len(serialise(UPDATE)) == 400

def test_channel_agrees_on_a_key_and_detects_tampering():
    a, b = new_key(), new_key()
    k1, k2 = session_key(a, b.public_key()), session_key(b, a.public_key())
    assert k1 == k2 and session_key(a, b.public_key(), b'other') != k1
    box = seal(k1, b'weights', b'round 1')
    assert unseal(k2, box, b'round 1') == b'weights'
    for bad in (box[:-1] + bytes([box[-1] ^ 1]), box[:12] + bytes([box[12] ^ 1]) + box[13:]):
        with pytest.raises(ValueError, match='authentication failed'): unseal(k2, bad, b'round 1')
    with pytest.raises(ValueError, match='authentication failed'): unseal(session_key(a, new_key().public_key()), box, b'round 1')

def test_no_false_rejections_over_a_20_round_honest_run():
    from hetfl_explore.foundation.data import tiny_digits_federation
    fd = tiny_digits_federation(0); pol = parse_policy(EXAMPLE_POLICY); ca = CertificateAuthority(policy=pol, now=T0); ids = {}
    for c in range(fd.num_clients):
        k = new_key(); ids[c] = (k, ca.enrol(make_csr(k, f'c{c}', GOOD), now=T0)[0])
    srv = AuthenticatedServer(ca, 'digits', pol, dict(min_trust=0.8))
    res = run_authenticated(fd, srv, ids, start=T0, rounds=20, clients_per_round=3, hidden=4, seed=0)
    assert srv.rejections == [] and res['accepted'] == [3] * 20 and len(srv.seen) == 60

def _digits_world(n_static=0):
    from hetfl_explore.foundation.data import tiny_digits_federation
    fd = tiny_digits_federation(0); pol = parse_policy(EXAMPLE_POLICY); ca = CertificateAuthority(policy=pol, now=T0); ids = {}
    for c in range(fd.num_clients):
        k = new_key(); ids[c] = (k, ca.enrol(make_csr(k, f'client-{c}', GOOD), now=T0)[0])
    return fd, pol, ca, ids

def test_engine_run_with_the_filter_has_no_false_rejections():
    from hetfl_explore.crowd.authenticated import authenticated_filter
    from hetfl_explore.crowd.bayesian import run_bayesfl_engine
    fd, pol, ca, ids = _digits_world()
    srv = AuthenticatedServer(ca, 'digits', pol, dict(min_trust=0.8))
    res = run_bayesfl_engine(fd, rounds=20, clients_per_round=3, hidden=4, seed=0, accept=authenticated_filter(srv, ids, start=T0))
    h = res['history']
    assert srv.rejections == [] and h.rounds.n_rejected.tolist() == [0] * 20 and len(srv.seen) == 60
    assert h.rounds.reported.map(len).tolist() == [3] * 20

def test_engine_records_each_attack_with_its_reason():
    "Expired, revoked and wrong-attribute clients, and a tampered, forged, replayed and re-tasked update, each in the history."
    from hetfl_explore.crowd.authenticated import authenticated_filter
    from hetfl_explore.engine.simulation import run_fl
    from hetfl_explore.engine.models import mlp
    from hetfl_explore.engine.config import RunConfig
    from hetfl_explore.engine.protocol import RoundRobinSelector
    fd, pol, ca, ids = _digits_world()
    k7, k8, k9, mallory = new_key(), new_key(), new_key(), new_key()
    ids[7] = (k7, ca.enrol(make_csr(k7, 'client-7-old', GOOD), now=T0 - timedelta(hours=1))[0])
    ids[8] = (k8, ca.enrol(make_csr(k8, 'client-8-lost', GOOD), now=T0)[0]); ca.revoke(ids[8][1], T0)
    ids[9] = (k9, ca.enrol(make_csr(k9, 'client-9-low', GOOD), now=T0)[0]); ca.trust.set('client-9-low', 0.5)
    kept = {}
    def mitm(t, ups):
        u = ups[0]; kept.setdefault('old', u)
        fake = {1: lambda: SignedUpdate(**{**u.__dict__, 'payload': bytes([u.payload[0] ^ 1]) + u.payload[1:]}),
                2: lambda: sign_update(mallory, u.certificate, u.task_id, t, u.payload), 3: lambda: kept['old'],
                4: lambda: sign_update(*ids[int(u.client_id.split('-')[1])], 'task7', t, u.payload)}
        return [fake[t]()] + ups[1:] if t in fake else ups
    srv = AuthenticatedServer(ca, 'digits', pol, dict(min_trust=0.8))
    cfg = RunConfig(rounds=6, clients_per_round=5, batch_size=16, lr=0.1)      # round robin: clients 0-4, 5-9, 0-4, ...
    h = run_fl(lambda: mlp(64, 8, 10), fd, RoundRobinSelector(), cfg, accept=authenticated_filter(srv, ids, mitm, T0))
    static = {7: REASONS['expired'], 8: REASONS['revoked'], 9: REASONS['policy']}
    attack = {1: REASONS['signature'], 2: REASONS['signature'], 3: REASONS['round'], 4: REASONS['task']}
    for t, r in h.rounds.iterrows():
        want = {k: static[k] for k in r.selected if k in static}
        if t in attack: want.setdefault(r.selected[0], attack[t])
        assert r.rejected == want, (t, r.rejected, want)
        assert sorted(r.reported) == sorted(k for k in r.selected if k not in want)
    assert set(h.clients.rejection.dropna()) == set(static.values()) | set(attack.values())

def test_filter_refuses_a_validly_signed_substitute():
    from hetfl_explore.crowd.authenticated import authenticated_filter
    fd, pol, ca, ids = _digits_world()
    srv = AuthenticatedServer(ca, 'digits', pol, dict(min_trust=0.8))
    swap = lambda t, ups: [sign_update(*ids[0], 'digits', t, b'\x00' * len(ups[0].payload))] + ups[1:]
    acc = authenticated_filter(srv, ids, swap, T0)
    with pytest.raises(ValueError, match='other than the trained one'): acc(0, np.array([0, 1]), torch.ones(2, 3), torch.zeros(3))
    with pytest.raises(ValueError, match='identities'): authenticated_filter(srv, ids, start=T0)(0, np.array([99]), torch.ones(1, 3), torch.zeros(3))

def test_a_second_update_of_a_client_in_a_round_is_rejected_and_costs_trust():
    pol = parse_policy(EXAMPLE_POLICY); ca = CertificateAuthority(policy=pol, now=T0); k = new_key()
    cert = ca.enrol(make_csr(k, 'eve', GOOD), now=T0)[0]; srv = AuthenticatedServer(ca, 'task42', pol, dict(min_trust=0.8))
    copies = [sign_update(k, cert, 'task42', 1, UPDATE) for _ in range(3)]             # fresh nonces, valid signatures
    assert srv.screen(copies, 1, T0) == [None, REASONS['duplicate'], REASONS['duplicate']]
    assert ca.trust.score('eve') == pytest.approx(0.9 + 0.01 - 2 * 0.2)
    assert srv.screen([sign_update(k, cert, 'task42', 2, UPDATE)], 2, T0) == [REASONS['policy']]   # trust 0.51 < 0.8: access lost

def test_the_ca_refuses_a_second_key_for_a_live_id_and_ignores_a_declared_trust():
    pol = parse_policy(EXAMPLE_POLICY); ca = CertificateAuthority(policy=pol, now=T0); k = new_key()
    cert = ca.enrol(make_csr(k, 'eve', {**GOOD, 'trust': 1.0}), now=T0)[0]
    assert 'trust' not in attributes_of(cert) and ca.trust.score('eve') == 0.9
    with pytest.raises(ValueError, match="'eve' holds a live certificate"): ca.enrol(make_csr(new_key(), 'eve', GOOD), now=T0)
    ca.revoke(cert, T0); assert ca.enrol(make_csr(new_key(), 'eve', GOOD), now=T0)[0] is not None      # rotation after revocation
    ca.trust.set('eve', 0.1)
    srv = AuthenticatedServer(ca, 'task42', pol, dict(min_trust=0.8))
    k2 = new_key(); c2 = ca.enrol(make_csr(k2, 'mallory', {**GOOD, 'trust': 1.0}), now=T0)[0]; ca.trust.set('mallory', 0.5)
    assert srv.screen([sign_update(k2, c2, 'task42', 1, UPDATE)], 1, T0) == [REASONS['policy']]   # declaring 1.0 does not help

@pytest.mark.parametrize('field,value', [('nonce', None), ('round', 'one'), ('round', True), ('payload', [1, 2]), ('client_id', 7),
                                         ('signature', None), ('certificate', b'pem'), ('task_id', None)])
def test_one_malformed_update_is_rejected_and_the_others_kept(world, field, value):
    _, _, ids = world; srv = server(world)
    bad = SignedUpdate(**{**sign_update(*ids['alice'], 'task42', 1, UPDATE).__dict__, field: value})
    assert srv.screen([bad, sign_update(*ids['bob'], 'task42', 1, UPDATE)], 1, T0) == [REASONS['malformed'], None]
    assert srv.rejections[-1]['reason'] == REASONS['malformed']

def test_abac_refuses_unknown_operators_and_compares_numpy_numbers():
    from hetfl_explore.crowd.abac import Condition
    with pytest.raises(ValueError, match="op='<='"): Condition('subject.trust', '<=', 0.9)
    with pytest.raises(ValueError, match="op='subset'"): Condition('subject.x', 'subset', 1, forall=True)
    with pytest.raises(ValueError, match='left'): Condition('trust', '>=', 0.9)
    pol = parse_policy(EXAMPLE_POLICY)
    assert pol.decide(Request({**GOOD, 'ram_gb': np.int64(8), 'disk_gb': np.float32(20)}, 'register')).permit
    assert not pol.decide(Request({**GOOD, 'full_disk_encryption': 1}, 'register')).permit          # 1 is not true
    d = pol.decide(Request({**GOOD, 'protocols': [['TLS']]}, 'register'))                           # no TypeError
    assert not d.permit and 'plain values' in d.explain()

def test_replays_and_other_task_updates_cannot_frame_a_device():
    "Six rounds of a third party replaying alice's signed updates and other-task updates: rejected, logged, trust untouched."
    pol = parse_policy(EXAMPLE_POLICY); ca = CertificateAuthority(policy=pol, now=T0); k = new_key()
    cert = ca.enrol(make_csr(k, 'alice', GOOD), now=T0)[0]; srv = AuthenticatedServer(ca, 'task42', pol, dict(min_trust=0.8))
    first = sign_update(k, cert, 'task42', 0, UPDATE); assert srv.screen([first], 0, T0) == [None]
    trust = ca.trust.score('alice'); other = sign_update(k, cert, 'task7', 1, UPDATE)   # signed by alice for another task
    for t in range(1, 7):
        reasons = srv.screen([first, other, first], t, T0)                          # captured messages, resent by anyone
        assert reasons == [REASONS['round'], REASONS['task'], REASONS['round']]
    assert ca.trust.score('alice') == trust and len(srv.rejections) == 18
    assert 'rejected' not in ca.trust.penalties
    with pytest.raises(ValueError, match='event'): ca.trust.observe('alice', 'rejected')
    assert srv.screen([sign_update(k, cert, 'task42', 7, UPDATE)], 7, T0) == [None]   # alice still takes part
