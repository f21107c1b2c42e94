"""Distance metric learning for CODA (python/coflowkit/metric_learning.py): pair
features and pair sampling against brute force, the optimisation against optima
derived by hand and by grid search, the two solvers against each other, synthetic
flows where one attribute alone tells coflows apart, and the distance file."""

import itertools
import json
import math
import re

import numpy as np
import pytest
from coflowkit import metric_learning as ml
from coflowkit._core import CoflowkitError

# ---------------------------------------------------------------------------
# pair features


def test_attributes_are_the_papers_order():
    assert ml.ATTRIBUTES == ("s_time", "m_size", "v_size", "m_int", "v_int", "d_com", "d_prt")
    assert ml.PAIRWISE == ("d_com", "d_prt")
    for name in ("spark", "hadoop"):
        w = ml.PAPER_WEIGHTS[name]
        assert len(w) == 7 and min(w) >= 0
    # As and Ah of CODA §3.2: only S_time, D_com and (Spark) D_prt matter
    assert ml.PAPER_WEIGHTS["spark"] == [3.825, 0, 0, 0, 0, 5.431, 0.217]
    assert ml.PAPER_WEIGHTS["hadoop"] == [3.472, 0, 0, 0, 0, 3.207, 0]


def test_pair_features_by_hand():
    rec = {
        "time": np.array([0.0, 1.5, 4.0]),
        "m_size": np.array([10.0, 13.0, 10.0]),
        "v_size": np.array([1.0, 1.0, 3.0]),
        "m_int": np.array([0.5, 0.0, 0.25]),
        "v_int": np.array([2.0, 2.0, 2.0]),
        "com": np.array([7, 7, 8]),
        "agg": np.array([5, 5, -1], dtype=np.int64),
    }
    u = ml.pair_features(rec, [0, 0, 1, 2], [1, 2, 2, 2])
    expected = [
        # s_time, m_size, v_size, m_int, v_int, d_com, d_prt
        [2.25, 9.0, 0.0, 0.25, 0.0, 0.0, 0.0],
        [16.0, 0.0, 4.0, 0.0625, 0.0, 1.0, 1.0],
        [6.25, 9.0, 4.0, 0.0625, 0.0, 1.0, 1.0],
        # a flow with itself: unknown port (-1) still counts as different
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
    ]
    assert u.shape == (4, 7)
    np.testing.assert_array_equal(u, expected)


def test_pair_features_unavailable_attributes_are_zero_columns():
    rec = {"time": np.array([0.0, 2.0, 3.0]), "agg": np.array([1, 2, 1])}
    u = ml.pair_features(rec, np.array([0, 0]), np.array([1, 2]))
    np.testing.assert_array_equal(u, [[4.0, 0, 0, 0, 0, 0, 1.0], [9.0, 0, 0, 0, 0, 0, 0.0]])
    assert ml.pair_features(rec, [], []).shape == (0, 7)


def test_pair_features_bad_input():
    with pytest.raises(CoflowkitError, match="no 'time'"):
        ml.pair_features({"com": np.array([1, 2])}, [0], [1])
    with pytest.raises(CoflowkitError, match=r"records\['com'\] has 3 entries"):
        ml.pair_features({"time": np.zeros(2), "com": np.zeros(3)}, [0], [1])
    with pytest.raises(CoflowkitError, match=r"pair indices must be in \[0, 2\)"):
        ml.pair_features({"time": np.zeros(2)}, [0], [2])


# ---------------------------------------------------------------------------
# pair sampling


def brute_pairs(ids):
    same, diff = set(), set()
    for i, j in itertools.combinations(range(len(ids)), 2):
        (same if ids[i] == ids[j] else diff).add((i, j))
    return same, diff


def as_set(i, j):
    pairs = list(zip(i.tolist(), j.tolist(), strict=True))
    assert len(set(pairs)) == len(pairs), "a pair appears twice"
    return set(pairs)


@pytest.mark.parametrize(
    "ids",
    [
        [3, 1, 3, 2, 1, 3, 7],  # a coflow of width 1 (7), non-contiguous ids
        ["b", "a", "b", "c"],  # any comparable key
        [5, 6, 7, 8],  # all width 1: no same-coflow pair
        [4, 4, 4],  # one coflow: no different-coflow pair
        [9],
    ],
)
def test_sample_pairs_exhaustive_when_small(ids):
    s_i, s_j, d_i, d_j = ml.sample_pairs(ids, max_pairs=1000)
    same, diff = brute_pairs(ids)
    assert as_set(s_i, s_j) == same
    assert as_set(d_i, d_j) == diff
    for arr in (s_i, s_j, d_i, d_j):
        assert arr.dtype == np.int64


def test_sample_pairs_exhaustive_at_exactly_the_budget():
    ids = [1, 1, 2, 2, 2]  # 10 pairs: 4 same, 6 different
    s_i, _, d_i, _ = ml.sample_pairs(ids, max_pairs=10)
    assert (len(s_i), len(d_i)) == (4, 6)
    s_i, _, d_i, _ = ml.sample_pairs(ids, max_pairs=9)  # S fits in half (4): D gets 5
    assert (len(s_i), len(d_i)) == (4, 5)


def test_sample_pairs_sampled_is_correct_and_deterministic():
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 40, 3000)
    first = ml.sample_pairs(ids, max_pairs=2001, seed=5)
    again = ml.sample_pairs(ids, max_pairs=2001, seed=5)
    other = ml.sample_pairs(ids, max_pairs=2001, seed=6)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], other[0])
    s_i, s_j, d_i, d_j = first
    assert (len(s_i), len(d_i)) == (1000, 1001)  # half of the budget each (S rounded down)
    assert np.all(ids[s_i] == ids[s_j]) and np.all(ids[d_i] != ids[d_j])
    assert np.all(s_i < s_j) and np.all(d_i < d_j)  # no flow with itself, i < j
    as_set(s_i, s_j), as_set(d_i, d_j)  # no repeats


def test_sample_pairs_gives_the_budget_left_by_s_to_d_and_back():
    # 6 coflows of 2 flows: 6 S pairs, 60 D pairs; budget 30 -> all S, 24 D
    ids = np.repeat(np.arange(6), 2)
    s_i, _, d_i, _ = ml.sample_pairs(ids, max_pairs=30)
    assert (len(s_i), len(d_i)) == (6, 24)
    # 3 coflows of 4: 18 S, 48 D; budget 30 -> 15 each
    s_i, _, d_i, _ = ml.sample_pairs(np.repeat([0, 1, 2], 4), max_pairs=30)
    assert (len(s_i), len(d_i)) == (15, 15)
    # one coflow of 10 and two of 1: 45 S, 21 D; budget 44 -> all D, 23 S
    ids = np.array([0] * 10 + [1, 2])
    s_i, _, d_i, _ = ml.sample_pairs(ids, max_pairs=44)
    assert (len(s_i), len(d_i)) == (23, 21)


def test_sample_pairs_is_uniform():
    # coflows of 100, 200, 300 flows: D pairs between them number 20000, 30000,
    # 60000 and S pairs inside them 4950, 19900, 44850
    ids = np.repeat([0, 1, 2], [100, 200, 300])
    s_i, s_j, d_i, d_j = ml.sample_pairs(ids, max_pairs=20_000, seed=3)
    kinds, counts = np.unique(ids[d_i] + ids[d_j], return_counts=True)  # 1, 2, 3
    np.testing.assert_allclose(counts / counts.sum(), [2 / 11, 3 / 11, 6 / 11], atol=0.015)
    _, counts = np.unique(ids[s_i], return_counts=True)
    np.testing.assert_allclose(
        counts / counts.sum(), np.array([4950, 19900, 44850]) / 69700, atol=0.015
    )


def test_sample_pairs_large_table_is_quick_and_exact_in_size():
    ids = np.random.default_rng(1).integers(0, 5000, 1_000_000)
    s_i, s_j, d_i, d_j = ml.sample_pairs(ids, max_pairs=200_000)
    assert (len(s_i), len(d_i)) == (100_000, 100_000)
    assert np.all(ids[s_i] == ids[s_j]) and np.all(ids[d_i] != ids[d_j])


# ---------------------------------------------------------------------------
# the optimisation, against optima derived by hand


@pytest.mark.parametrize("method", ml.METHODS)
def test_one_attribute_closed_form(method):
    # S differences 1 and 3 (u = 1, 9: mean s = 5); D differences 2, 4, 6 (mean of
    # sqrt(u) m = 4). min a*s s.t. sqrt(a)*m >= 1 is a* = 1/m^2 = 1/16. Xing's
    # g(a) = a*s - 1/2 log a - log m has g'(a) = s - 1/(2a) = 0 at a_g = 1/(2s) =
    # 1/10, and rescaling a_g onto the constraint, a_g / (sqrt(a_g) m)^2, is 1/16.
    u_same = np.array([[1.0], [9.0]])
    u_diff = np.array([[4.0], [16.0], [36.0]])
    w = ml.learn_diagonal(u_same, u_diff, method=method)
    assert w.shape == (1,)
    assert w[0] == pytest.approx(1 / 16, abs=1e-6)
    a_g = 0.1
    assert ml.objective([a_g], u_same, u_diff) == pytest.approx(
        0.5 - 0.5 * math.log(0.1) - math.log(4)
    )
    for da in (-1e-3, 1e-3):  # a_g is g's minimum
        assert ml.objective([a_g + da], u_same, u_diff) > ml.objective([a_g], u_same, u_diff)


@pytest.mark.parametrize("method", ml.METHODS)
def test_two_attribute_closed_form(method):
    # D pairs differ in one attribute each: u = (1, 0) and (0, 1), so with
    # x = sqrt(a1), y = sqrt(a2): min s1 x^2 + s2 y^2 s.t. (x + y) / 2 = 1. Lagrange:
    # 2 s1 x = l/2, 2 s2 y = l/2 -> x = l/(4 s1), y = l/(4 s2); with s = (1, 2),
    # l (1/4 + 1/8) / 2 = 1 -> l = 16/3, x = 4/3, y = 2/3: a = (16/9, 4/9).
    u_same = np.array([[2.0, 0.0], [0.0, 4.0]])  # mean (1, 2)
    u_diff = np.array([[1.0, 0.0], [0.0, 1.0]])
    w = ml.learn_diagonal(u_same, u_diff, method=method)
    np.testing.assert_allclose(w, [16 / 9, 4 / 9], rtol=1e-8)


def grid_minimum(u_same, u_diff, box, n=201):
    """Brute force: g on an n x n grid of [0, box0] x [0, box1], then on a grid 20x
    finer around the best point; returns (argmin, min)."""
    lo, hi = np.zeros(2), np.asarray(box, dtype=float)
    for _ in range(3):
        x = np.linspace(lo[0], hi[0], n)
        y = np.linspace(lo[1], hi[1], n)
        gx, gy = np.meshgrid(x, y, indexing="ij")
        pts = np.stack([gx.ravel(), gy.ravel()], axis=1)
        s = u_same.mean(axis=0)
        with np.errstate(divide="ignore"):
            g = pts @ s - np.log(np.sqrt(u_diff @ pts.T).mean(axis=0))
        k = int(np.argmin(g))
        best, gbest = pts[k], g[k]
        step = (hi - lo) / (n - 1)
        lo = np.maximum(best - 5 * step, 0.0)
        hi = best + 5 * step
    return best, gbest, step


@pytest.mark.parametrize("noise", [False, True])
def test_two_attributes_against_grid_search(noise):
    rng = np.random.default_rng(11)
    # attribute 0 separates moderately; attribute 1 separates weakly or (noise)
    # not at all: then its optimal weight is 0, on the boundary
    x_s = rng.normal(size=(300, 2)) * [1.0, 1.0]
    x_d = rng.normal(size=(500, 2)) * [2.0, 1.0 if noise else 1.8]
    u_same, u_diff = x_s**2, x_d**2
    w = ml.learn_diagonal(u_same, u_diff)
    # g's minimiser is on the ray of w, where s . a = 1/2
    s = u_same.mean(axis=0)
    a_g = w / (2 * (s @ w))
    # s . a_g = 1/2 bounds each a_k by 1/(2 s_k): the grid box needs no answer
    best, gbest, step = grid_minimum(u_same, u_diff, 0.5 / s)
    assert ml.objective(a_g, u_same, u_diff) <= gbest + 1e-12
    np.testing.assert_allclose(a_g, best, atol=2 * step.max())
    if noise:
        assert w[1] == 0.0
    else:
        assert w[1] > 0.2 * w[0]  # 0.26 and 0.069
    # the constraint is active: the mean D distance is 1
    assert np.sqrt(u_diff @ w).mean() == pytest.approx(1.0, rel=1e-12)


def random_problem(seed):
    """Squared differences of Gaussians (S narrower than D for some attributes) and
    indicators, 2 to 7 attributes."""
    rng = np.random.default_rng(seed)
    m = 2 + seed % 6
    n_s, n_d = 400, 1200
    sd_s = rng.uniform(0.3, 2.0, m)
    sd_d = sd_s * rng.uniform(0.8, 3.0, m)
    u_same = (rng.normal(size=(n_s, m)) * sd_s) ** 2
    u_diff = (rng.normal(size=(n_d, m)) * sd_d) ** 2
    if m >= 4:  # the last two as indicators, like d_com and d_prt
        p_s, p_d = rng.uniform(0.05, 0.5, 2), rng.uniform(0.3, 0.9, 2)
        u_same[:, -2:] = rng.random((n_s, 2)) < p_s
        u_diff[:, -2:] = rng.random((n_d, 2)) < p_d
    return u_same, u_diff


@pytest.mark.parametrize("seed", range(12))
def test_newton_and_gradient_agree(seed):
    u_same, u_diff = random_problem(seed)
    wn = ml.learn_diagonal(u_same, u_diff, method="newton")
    wg = ml.learn_diagonal(u_same, u_diff, method="gradient")
    assert np.all(wn >= 0) and np.all(wg >= 0) and wn.max() > 0
    assert np.abs(wn - wg).max() <= 1e-4 * wn.max()
    # optimality: no feasible direction lowers g (checked on the rescaled minimiser)
    s = u_same.mean(axis=0)
    a_g = wn / (2 * (s @ wn))
    g0 = ml.objective(a_g, u_same, u_diff)
    for k in range(len(wn)):
        for step in (1e-4, -1e-4):
            b = a_g.copy()
            b[k] = max(b[k] + step * a_g.max(), 0.0)
            assert ml.objective(b, u_same, u_diff) >= g0 - 1e-12


def test_weights_do_not_depend_on_the_number_of_pairs():
    u_same, u_diff = random_problem(3)
    w = ml.learn_diagonal(u_same, u_diff)
    w_more = ml.learn_diagonal(np.tile(u_same, (3, 1)), np.tile(u_diff, (2, 1)))
    np.testing.assert_allclose(w_more, w, rtol=1e-9, atol=1e-12 * w.max())
    assert np.sqrt(u_diff @ w).mean() == pytest.approx(1.0, rel=1e-12)


def test_weights_follow_the_units():
    # attribute 0 in ms instead of s: its u is 10^6 times larger, its weight 10^6
    # times smaller, the others unchanged
    u_same, u_diff = random_problem(5)
    w = ml.learn_diagonal(u_same, u_diff)
    scale = np.ones(u_same.shape[1])
    scale[0] = 1e6
    w_ms = ml.learn_diagonal(u_same * scale, u_diff * scale)
    np.testing.assert_allclose(w_ms * scale, w, rtol=1e-7, atol=1e-9 * w.max())


def test_attributes_without_information_get_weight_zero():
    rng = np.random.default_rng(2)
    u_same = (rng.normal(size=(200, 4)) * [1, 1, 1, 1]) ** 2
    u_diff = (rng.normal(size=(300, 4)) * [3, 1, 1, 1]) ** 2
    u_same[:, 1] = 0.0  # unavailable: zero in S and D
    u_diff[:, 1] = 0.0
    u_diff[:, 2] = 0.0  # differs only within coflows
    w = ml.learn_diagonal(u_same, u_diff)
    assert w[1] == 0.0 and w[2] == 0.0 and w[0] > 0


def test_a_perfect_separator_takes_all_the_weight():
    # attribute 1 never differs within a coflow and differs in 40 % of D pairs: the
    # objective is 0 with weight on it alone, a = 1 / 0.4^2 (mean D distance 1)
    rng = np.random.default_rng(4)
    u_same = np.column_stack([rng.random(100), np.zeros(100)])
    u_diff = np.column_stack([rng.random(250) * 4, np.arange(250) % 5 < 2])
    for method in ml.METHODS:
        w = ml.learn_diagonal(u_same, u_diff, method=method)
        np.testing.assert_allclose(w, [0.0, 1 / 0.4**2], rtol=1e-12)


def test_learn_diagonal_bad_input():
    with pytest.raises(CoflowkitError, match="no different-coflow pairs"):
        ml.learn_diagonal(np.ones((3, 2)), np.zeros((0, 2)))
    with pytest.raises(CoflowkitError, match="no same-coflow pairs"):
        ml.learn_diagonal(np.zeros((0, 2)), np.ones((3, 2)))
    with pytest.raises(CoflowkitError, match="do not differ in any attribute"):
        ml.learn_diagonal(np.ones((3, 2)), np.zeros((3, 2)))
    with pytest.raises(CoflowkitError, match="u_diff has 3 attributes"):
        ml.learn_diagonal(np.ones((3, 2)), np.ones((3, 3)))
    with pytest.raises(CoflowkitError, match="negative"):
        ml.learn_diagonal(-np.ones((3, 2)), np.ones((3, 2)))
    with pytest.raises(CoflowkitError, match="method='lbfgs'"):
        ml.learn_diagonal(np.ones((3, 2)), np.ones((3, 2)), method="lbfgs")


# ---------------------------------------------------------------------------
# synthetic flows where one attribute tells coflows apart


def synthetic(separator, n_coflows=40, width=50, seed=0, community_noise=0.0):
    """Flows of ``n_coflows`` coflows; ``separator`` ("time" or "com") differs
    between coflows, every other attribute is noise drawn alike for every coflow."""
    rng = np.random.default_rng(seed)
    cid = np.repeat(np.arange(n_coflows), width)
    n = cid.size
    if separator == "time":  # coflow k starts at 0.5 k s, its flows within ~0.1 s
        time = 0.5 * cid + rng.normal(0, 0.1, n)
        com = rng.integers(0, 4, n)
    else:  # every flow at a time drawn alike; coflow k in community k mod 8
        time = rng.uniform(0, 20, n)
        com = cid % 8
        flip = rng.random(n) < community_noise
        com = np.where(flip, rng.integers(0, 8, n), com)
    rec = {
        "time": time,
        "m_size": rng.normal(0, 1, n),
        "v_size": rng.lognormal(0, 1, n),
        "m_int": rng.normal(0, 3, n),
        "v_int": rng.exponential(1, n),
        "com": com,
        "agg": rng.integers(0, 6, n).astype(np.int64),
    }
    return rec, cid


def importance(d, rec, cid):
    """Each attribute's share of the mean D distance^2, a unit-free importance."""
    _, _, d_i, d_j = ml.sample_pairs(cid, seed=d["seed"])
    contrib = np.asarray(d["weights"]) * ml.pair_features(rec, d_i, d_j).mean(axis=0)
    return contrib / contrib.sum()


@pytest.mark.parametrize("method", ml.METHODS)
def test_time_alone_separates(method):
    rec, cid = synthetic("time")
    d = ml.learn(rec, cid, method=method)
    w = np.asarray(d["weights"])
    assert int(np.argmax(w)) == 0
    assert np.sort(d["normalized"])[-2] < 0.1  # every other weight < 10 % of time's
    assert importance(d, rec, cid)[0] > 0.9


@pytest.mark.parametrize("noise", [0.0, 0.1])
def test_community_alone_separates(noise):
    rec, cid = synthetic("com", community_noise=noise)
    d = ml.learn(rec, cid)
    w = np.asarray(d["weights"])
    assert int(np.argmax(w)) == 5
    assert np.sort(d["normalized"])[-2] < 0.1
    assert importance(d, rec, cid)[5] > 0.9
    if noise == 0.0:
        # no same-coflow pair crosses communities: d_com alone, and the mean D
        # distance 1 fixes it at 1 / (share of D pairs across communities)^2
        _, _, d_i, d_j = ml.sample_pairs(cid)
        share = np.mean(rec["com"][d_i] != rec["com"][d_j])
        expected = np.zeros(7)
        expected[5] = 1 / share**2
        np.testing.assert_allclose(w, expected, rtol=1e-12)


def test_learn_result_and_its_errors():
    rec, cid = synthetic("time", n_coflows=5, width=4)
    d = ml.learn(rec, cid, max_pairs=100, seed=7)
    assert d["format"] == "coflowkit-distance/1"
    assert d["attributes"] == list(ml.ATTRIBUTES)
    assert d["pairs"] == {"same": 30, "different": 70}  # 5 * 6 of 190; budget 100
    assert (d["method"], d["seed"]) == ("newton", 7)
    assert max(d["normalized"]) == 1.0
    np.testing.assert_allclose(np.asarray(d["weights"]) / max(d["weights"]), d["normalized"])
    json.dumps(d)  # JSON-ready
    with pytest.raises(CoflowkitError, match="one coflow"):
        ml.learn(rec, np.zeros(20, dtype=int))
    with pytest.raises(CoflowkitError, match="single flow"):
        ml.learn(rec, np.arange(20))
    with pytest.raises(CoflowkitError, match="one coflow per flow"):
        ml.learn(rec, cid[:-1])


# ---------------------------------------------------------------------------
# the distance file


def test_save_and_load(tmp_path):
    rec, cid = synthetic("com", n_coflows=6, width=5)
    d = ml.learn(rec, cid)
    d["eps"] = 0.25
    path = tmp_path / "distance.json"
    ml.save(d, path)
    back = ml.load(path)
    assert back == d
    for name, w in ml.PAPER_WEIGHTS.items():  # the paper's weights are a valid file
        p = tmp_path / f"{name}.json"
        p.write_text(json.dumps({"format": ml.FORMAT, "weights": w}))
        assert ml.load(p)["weights"] == [float(x) for x in w]


def write(tmp_path, text):
    p = tmp_path / "d.json"
    p.write_text(text)
    return p


def good(**change):
    d = {"format": "coflowkit-distance/1", "weights": [1, 0, 0, 0, 0, 2, 0.5]}
    d.update(change)
    return json.dumps(d)


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", r"not valid JSON \(Expecting property name"),
        ("[1, 2]", "expected a JSON object, got list"),
        (good(format="coflowkit-distance/2"), "format must be 'coflowkit-distance/1'"),
        (good(weights=[1, 2, 3]), "weights must be a list of 7 numbers, got 3 entries"),
        (good(weights=None), "weights must be a list of 7 numbers, got None"),
        (good(weights=[1, 0, 0, 0, 0, -2, 0]), "weight of d_com must be finite and >= 0, got -2"),
        (good(weights=[1, 0, 0, 0, 0, "2", 0]), "weight of d_com is not a number"),
        (
            good(weights=[1, 0, 0, 0, 0, 2, 0]).replace("[1,", "[NaN,"),
            "weight of s_time must be finite",
        ),
        (good(eps=0), "eps must be a number > 0, got 0"),
        (good(eps=True), "eps must be a number > 0, got True"),
        (good(attributes=["a"] * 7), "attributes must be"),
    ],
)
def test_load_errors(tmp_path, text, message):
    p = write(tmp_path, text)
    with pytest.raises(CoflowkitError) as e:
        ml.load(p)
    assert str(e.value).startswith(f"{p}: ")
    assert len(str(e.value).splitlines()) == 1
    assert re.search(message, str(e.value)), str(e.value)


def test_load_missing_file(tmp_path):
    with pytest.raises(CoflowkitError, match=r"nope\.json: no such file"):
        ml.load(tmp_path / "nope.json")


def test_save_refuses_a_bad_dict(tmp_path):
    with pytest.raises(CoflowkitError, match="weight of m_size must be finite"):
        ml.save({"format": ml.FORMAT, "weights": [1, math.inf, 0, 0, 0, 0, 0]}, tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()
