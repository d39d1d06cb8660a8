"""The embedded judge: offline, a proper distribution over 1–9, deterministic. Never its direction."""

from __future__ import annotations

import asyncio
import math

import pytest

from judgeaudit.judges import local, make_judge
from judgeaudit.records import JudgeRequest

REQ = JudgeRequest(request_id="x", text="The drug cures every cancer in all patients.",
                   evidence="A trial in 40 adults with melanoma found modest tumour shrinkage in some.",
                   criterion="Overreach: does the claim assert more than the evidence licenses?")


@pytest.fixture(scope="module")
def judge():
    return make_judge("local")


def test_loads_offline_and_returns_a_proper_distribution(judge, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    v = asyncio.run(judge.judge_one(REQ))
    assert v.parse_ok and v.error is None and v.family == "google"
    assert len(v.score_dist) == 9 and all(p >= 0 for p in v.score_dist)
    assert math.isclose(sum(v.score_dist), 1.0, abs_tol=1e-9)
    assert math.isclose(v.score, sum(p * s for p, s in zip(v.score_dist, range(1, 10))), abs_tol=1e-9)
    # the plain-text prompt ending in "Score:" puts most next-token mass on the digits
    assert v.meta["digit_mass"] > 0.8


def test_identical_on_a_repeated_call(judge):
    local._DIST_CACHE.clear()
    a = asyncio.run(judge.judge_one(REQ))
    local._DIST_CACHE.clear()
    other = REQ.model_copy(update={"text": "A different claim entirely, evaluated in between."})
    asyncio.run(judge.judge_one(other))                  # the KV cache now holds another prompt
    local._DIST_CACHE.clear()
    b = asyncio.run(judge.judge_one(REQ))
    assert a.call_key == b.call_key
    assert a.score_dist == pytest.approx(b.score_dist, abs=1e-6)


def test_sampled_grades_are_seeded_by_the_call(judge):
    hot = make_judge("local", temperature=1.0)
    grades = [asyncio.run(hot.judge_one(REQ.model_copy(update={"epoch": e}))).score for e in range(6)]
    again = [asyncio.run(hot.judge_one(REQ.model_copy(update={"epoch": e}))).score for e in range(6)]
    assert grades == again and all(g in range(1, 10) for g in grades)


def test_pairwise_choice(judge):
    req = JudgeRequest(request_id="p", form="pairwise", prompt="Name a prime number.", response_a="7",
                       response_b="8")
    v = asyncio.run(judge.judge_one(req))
    assert v.parse_ok and v.choice in ("A", "B") and 0 < v.meta["choice_mass"] <= 1


def test_runs_with_the_network_blocked(tmp_path):
    """In a fresh process whose sockets refuse every non-loopback address, the judge still loads and grades."""
    import subprocess
    import sys

    code = (
        "import socket\n"
        "real = socket.socket.connect\n"
        "def guarded(self, addr):\n"
        "    host = addr[0] if isinstance(addr, tuple) else str(addr)\n"
        "    if not str(host).startswith(('127.', '::1', 'localhost', '/')):\n"
        "        raise OSError('network blocked by test: ' + str(host))\n"
        "    return real(self, addr)\n"
        "socket.socket.connect = guarded\n"
        "import asyncio\n"
        "from judgeaudit.judges import make_judge\n"
        "from judgeaudit.records import JudgeRequest\n"
        "v = asyncio.run(make_judge('local').judge_one(JudgeRequest(request_id='a', text='A claim.', evidence='E.')))\n"
        "print(sum(v.score_dist))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "HOME": str(tmp_path)})
    assert p.returncode == 0, p.stderr
    assert abs(float(p.stdout.split()[-1]) - 1.0) < 1e-9


def test_amx_is_read_from_the_ggml_build():
    native = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | REPACK = 1 |"
    portable = "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | REPACK = 1 |"
    assert local.ggml_has_amx(native) and not local.ggml_has_amx(portable)
    assert not local.ggml_has_amx("CPU : AMX_INT8 = 0 | AVX2 = 1 |")
    # the build make installs is the portable one
    assert not local.ggml_has_amx()


def test_model_params_patch_is_scoped():
    import llama_cpp.llama_cpp as lib

    before = lib.llama_model_default_params
    with local._model_params(use_extra_bufts=False):
        assert lib.llama_model_default_params().use_extra_bufts is False
    assert lib.llama_model_default_params is before
    assert lib.llama_model_default_params().use_extra_bufts is True


def test_world_label_read_off_the_true_false_distribution(judge):
    from judgeaudit.records import WorldItem
    from judgeaudit.world.requests import build_request
    from judgeaudit.world.run import context_for

    item = WorldItem(item_id="w", task="qa", output="Lyon.", world="Paris is the capital of France.",
                     question="What is the capital of France?", defective=True)
    req = build_request(item, "informed", context_for([item], 0), form="label")
    v = asyncio.run(judge.judge_one(req))
    p_true = float(v.raw.removeprefix("P(true)="))
    assert v.parse_ok and v.error is None and v.label == (p_true >= 0.5)
    # the JSON answer's first token carries most of the next-token mass
    assert v.meta["label_mass"] > 0.5
    hot = make_judge("local", temperature=1.0)
    labels = [asyncio.run(hot.judge_one(req.model_copy(update={"epoch": e}))).label for e in range(8)]
    assert labels == [asyncio.run(hot.judge_one(req.model_copy(update={"epoch": e}))).label for e in range(8)]
