"""The validity analysis's reading of its inputs (``analyses.validity.verdicts``, ``length``, ``profile``):
each judge's rows of the verdict table, the requests of a probe set, the medians of the length table, and
the BLAS setting of a small design, each giving the numbers the direct computation gives."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgeaudit.analyses.validity import probe_design, validity_profile
from judgeaudit.analyses.validity import rates
from judgeaudit.analyses.validity.length import _median
from judgeaudit.analyses.validity.verdicts import read_table, requests_of

try:
    from simulate_validity import make_probes, null_judge_grades, planted, simulate_grades
except ImportError:  # tests laid out as a package
    from .simulate_validity import make_probes, null_judge_grades, planted, simulate_grades


def test_median_is_numpys_to_the_bit():
    rng = np.random.default_rng(0)
    for n in range(1, 40):
        for x in (rng.normal(size=n), rng.integers(-3, 4, n) / 7.0, np.round(rng.random(n), 2)):
            assert _median(x).hex() == float(np.median(x)).hex(), x


def test_each_judge_reads_its_own_rows_in_table_order():
    probes = make_probes(2)
    d = probe_design(probes, 0.75)
    ids = [str(d.bases[0]), str(d.probe_ids[0]), "elsewhere", str(d.probe_ids[1])]
    verdicts = pd.DataFrame({"judge_id": ["b", "a", None, "b"], "request_id": ids, "score": [1.0, 2.0, 3.0, 4.0]})
    t = read_table(verdicts, requests_of(d))
    assert [(j, rows.tolist()) for j, rows in t.judges[:2]] == [("b", [0, 3]), ("a", [1])]
    assert pd.isna(t.judges[2][0]) and len(t.judges[2][1]) == 0       # a missing judge id matches no row
    assert (t.request[[0, 1, 3]] >= 0).all() and t.request[2] == -1    # another analysis's request
    p = validity_profile(probes, verdicts, n_boot=0, n_perm=0)
    assert [j.judge_id for j in p.judges] == ["b", "a", "nan"] and p["nan"]["missing"] == len(requests_of(d).index)


def test_a_base_item_with_two_originals_is_as_long_as_its_last_one():
    probes = make_probes(1)
    probes.loc[0, "original"] = "x"                                   # the first probe's copy of the original
    d = probe_design(probes, 0.75)
    req = requests_of(d)
    assert req.length[req.base[0]] == len(probes["original"].iloc[-1])
    assert (req.length[req.edit] == probes["edited"].str.len().to_numpy()).all()


def test_one_blas_thread_gives_the_numbers_of_blas_own_threads(monkeypatch):
    """A small design's bootstrap products run on one BLAS thread (``rates.ONE_BLAS_THREAD_UP_TO``); a fine
    grade scale makes the re-selected bootstrap's products go through BLAS (more than 64 columns)."""
    probes = make_probes(30, seed=1)
    v = pd.concat([null_judge_grades(probes, seed=2),
                   simulate_grades(probes, planted(0.05, 0.5, 0.3), seed=3)], ignore_index=True)
    one = validity_profile(probes, v, n_boot=300, n_perm=50, seed=4).to_dict()
    monkeypatch.setattr(rates, "ONE_BLAS_THREAD_UP_TO", 0)
    own = validity_profile(probes, v, n_boot=300, n_perm=50, seed=4).to_dict()
    assert repr(one) == repr(own)
