"""Inspect AI interoperability: a judgeaudit judge as an Inspect scorer on a tiny task run offline with
Inspect's mock model, its log read back with ``replay:inspect:``, and hand-built logs (C/I values, errors,
missing scores, pairwise answers, numeric scales).

Needs the ``inspect`` extra (``pip install -e '.[inspect]'``): without it these tests fail when
``CI=true`` and skip otherwise.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import socket
import subprocess
import sys

import pytest

from judgeaudit.commands.common import build_judges
from judgeaudit.errors import InputError
from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest

MISSING = "the Inspect AI tests need inspect-ai (pip install -e '.[inspect]')"

# The tiny task: sample id -> (input, the mock model's reply, target). reference:length grades a reply
# 1 + 8·min(1, characters/400): 40 → 1.8, 100 → 3.0, 200 → 5.0, 1000 → 9.0.
TASK = {"a": ("question a", "x" * 40, "ta"), "b": ("question b", "y" * 100, "tb"),
        "c": ("question c", "z" * 200, "tc"), 4: ("question 4", "w" * 1000, "t4")}
LENGTH_GRADE = {"a": 1.8, "b": 3.0, "c": 5.0, "4": 9.0}
EPOCHS = 2


def _require_inspect() -> None:
    if importlib.util.find_spec("inspect_ai") is None:
        if os.environ.get("CI") == "true":
            pytest.fail(MISSING)
        pytest.skip(MISSING)


def test_missing_inspect_fails_under_ci_and_skips_otherwise(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"\.\[inspect\]"):
        _require_inspect()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match=r"\.\[inspect\]"):
        _require_inspect()


def test_without_the_package_both_directions_name_the_extra(monkeypatch, tmp_path):
    from judgeaudit.interop import inspect as interop

    monkeypatch.setitem(sys.modules, "inspect_ai", None)   # import inspect_ai now raises ImportError
    monkeypatch.setattr(interop, "_registered", interop._registered.__wrapped__)   # no cached scorer
    log = tmp_path / "run.eval"
    log.write_bytes(b"")
    for call in (lambda: make_judge(f"replay:inspect:{log}"), lambda: interop.judge_scorer("reference:length")):
        with pytest.raises(InputError, match=r"judgeaudit\[inspect\]"):
            call()


class _Offline:
    """socket.getaddrinfo and socket.connect refuse every host but the loopback; refusals are kept."""

    LOCAL = ("127.0.0.1", "::1", "localhost")

    def __init__(self, mp: pytest.MonkeyPatch):
        self.refused: list[object] = []
        real_connect, real_lookup = socket.socket.connect, socket.getaddrinfo

        def connect(sock, address):
            if sock.family != socket.AF_UNIX and address[0] not in self.LOCAL:
                self.refused.append(address)
                raise OSError(f"offline test: no connection to {address!r}")
            return real_connect(sock, address)

        def lookup(host, *args, **kwargs):
            if host not in self.LOCAL and host is not None:
                self.refused.append(host)
                raise socket.gaierror(f"offline test: no lookup of {host!r}")
            return real_lookup(host, *args, **kwargs)

        mp.setattr(socket.socket, "connect", connect)
        mp.setattr(socket, "getaddrinfo", lookup)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The tiny task (4 samples × 2 epochs) on the mock model, scored by two exported judges:
    reference:length and reference:flip (which fails: no meta['role'] in an Inspect request)."""
    _require_inspect()
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import generate

    from judgeaudit.interop.inspect import judge_scorer

    root = tmp_path_factory.mktemp("inspect")
    replies = {inp: out for inp, out, _ in TASK.values()}

    def reply(messages, tools, tool_choice, config):
        out = ModelOutput.from_content(model="mockllm", content=replies[messages[-1].text])
        # usage given, so the mock model never counts tokens (tiktoken would download its encoding)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    task = Task(dataset=[Sample(id=sid, input=inp, target=tgt) for sid, (inp, _, tgt) in TASK.items()],
                solver=[generate()], scorer=[judge_scorer("reference:length"), judge_scorer("reference:flip")])
    with pytest.MonkeyPatch.context() as mp:
        for name, value in {"INSPECT_LOG_DIR": root / "logs", "INSPECT_DISPLAY": "none",
                            "XDG_DATA_HOME": root / "data", "XDG_CACHE_HOME": root / "cache"}.items():
            mp.setenv(name, str(value))
        offline = _Offline(mp)
        log, = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=reply), epochs=EPOCHS,
                            log_dir=str(root / "logs"), display="none", max_connections=1)
    assert offline.refused == []
    return log, root


def _requests(form: str = "graded") -> list[JudgeRequest]:
    return [JudgeRequest(request_id=str(sid), form=form, text="unused", epoch=e)
            for sid in TASK for e in range(EPOCHS)]


def test_exported_scorer_scores_each_sample_as_the_judge_does(run):
    log, _ = run
    assert log.status == "success" and len(log.samples) == len(TASK) * EPOCHS
    length, flip = (s.name for s in log.results.scores)
    judge = make_judge("reference:length")
    for sample in log.samples:
        inp, out, tgt = TASK[sample.id]
        score = sample.scores[length]
        assert score.value == pytest.approx(LENGTH_GRADE[str(sample.id)])
        request = JudgeRequest(request_id=str(sample.id), text=out, question=inp, reference=tgt, evidence=inp,
                               epoch=sample.epoch - 1)
        assert score.metadata["judgeaudit"]["call_key"] == judge.key(request)
        assert score.metadata["judgeaudit"]["judge_id"] == "reference:length"
        failed = sample.scores[flip]
        assert failed.reason == "scoring_failed" and "meta['role']" in failed.explanation
    metrics = {s.name: s for s in log.results.scores}
    assert metrics[length].metrics["mean"].value == pytest.approx(sum(LENGTH_GRADE.values()) / len(TASK))
    # Inspect's metrics count samples after reducing the epochs: the failed judge left all 4 unscored
    assert (metrics[length].scored_samples, metrics[length].unscored_samples) == (len(TASK), 0)
    assert (metrics[flip].scored_samples, metrics[flip].unscored_samples) == (0, len(TASK))


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_round_trip_ids_epochs_and_scores(run, fmt, tmp_path):
    from inspect_ai.log import read_eval_log, write_eval_log

    from judgeaudit.interop.inspect import LogCounts

    log, _ = run
    path = tmp_path / f"run.{fmt}"
    write_eval_log(read_eval_log(log.location), str(path))
    length, flip = (s.name for s in log.results.scores)

    with pytest.raises(InputError, match=r"2 scorers .*pick one with \?scorer=NAME"):
        make_judge(f"replay:inspect:{path}")
    judge = make_judge(f"replay:inspect:{path}?scorer={length}")
    assert judge.id == f"replay:inspect:{path}?scorer={length}"
    assert judge.log_counts == LogCounts(samples=8, scored=8, unscored=0, errors=0)
    verdicts = asyncio.run(judge.judge(_requests()))
    assert [(v.request_id, v.epoch) for v in verdicts] == [(str(s), e) for s in TASK for e in range(EPOCHS)]
    assert [v.score for v in verdicts] == pytest.approx([LENGTH_GRADE[str(s)] for s in TASK for _ in range(EPOCHS)])
    assert all(v.parse_ok and v.error is None for v in verdicts)
    assert asyncio.run(judge.judge([JudgeRequest(request_id="a", epoch=2)]))[0].error == "not in replay file"

    # the CLI's build_judges makes one judge per scorer; the failing judge's calls come back as failed calls
    both = build_judges([f"replay:inspect:{path}"])
    assert [j.id for j in both] == [f"replay:inspect:{path}?scorer={n}" for n in (length, flip)]
    assert [j.id for j in build_judges([f"replay:inspect:{path}?scorer={flip}"])] == [both[1].id]
    assert both[1].log_counts == LogCounts(samples=8, scored=0, unscored=0, errors=8)
    failed = asyncio.run(both[1].judge(_requests()))
    assert all(v.score is None and not v.parse_ok and v.error.startswith("scoring_failed: ValueError: reference:flip")
               for v in failed)


_GUARD = """
import socket
_LOCAL, _LOG = ("127.0.0.1", "::1", "localhost", None), {log!r}
_lookup, _connect = socket.getaddrinfo, socket.socket.connect
def _refuse(what):
    with open(_LOG, "a") as fh:
        fh.write(repr(what) + "\\n")
    raise OSError(f"offline test: {{what!r}} refused")
def getaddrinfo(host, *a, **k):
    return _lookup(host, *a, **k) if host in _LOCAL else _refuse(host)
def connect(sock, address):
    return _connect(sock, address) if sock.family == socket.AF_UNIX or address[0] in _LOCAL else _refuse(address)
socket.getaddrinfo, socket.socket.connect = getaddrinfo, connect
"""


def test_inspect_score_finds_the_scorer_through_the_entry_point(run, tmp_path):
    """``inspect score LOG --scorer judgeaudit/judge -S judge=…`` in a fresh process that knows judgeaudit only by
    the entry point pyproject.toml declares (a dist-info beside a sitecustomize that keeps the process offline)."""
    import tomllib
    from pathlib import Path

    log, root = run
    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]
    target = project["entry-points"]["inspect_ai"]["judgeaudit"]
    site = tmp_path / "site"
    dist = site / "judgeaudit_inspect_entry-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: judgeaudit-inspect-entry\nVersion: 0\n")
    (dist / "entry_points.txt").write_text(f"[inspect_ai]\njudgeaudit = {target}\n")
    refused = tmp_path / "refused.txt"
    (site / "sitecustomize.py").write_text(_GUARD.format(log=str(refused)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path]), "INSPECT_DISPLAY": "none",
           "XDG_DATA_HOME": str(root / "data"), "XDG_CACHE_HOME": str(root / "cache")}
    out = tmp_path / "rescored.eval"
    done = subprocess.run([sys.executable, "-m", "inspect_ai", "score", log.location, "--scorer", "judgeaudit/judge",
                           "-S", "judge=reference:constant", "--action", "overwrite", "--output-file", str(out)],
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert not refused.exists(), refused.read_text()
    judge = make_judge(f"replay:inspect:{out}")
    assert judge.spec.model == "constant"   # the judge the scorer ran, as its Score metadata recorded it
    verdicts = asyncio.run(judge.judge(_requests()))
    assert [v.score for v in verdicts] == [5.0] * len(TASK) * EPOCHS


def _hand_log(path, samples):
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSpec, write_eval_log

    spec = EvalSpec(created="2026-12-01T00:00:00+00:00", task="hand", dataset=EvalDataset(),
                    model="mockllm/model", config=EvalConfig())
    write_eval_log(EvalLog(eval=spec, samples=samples), str(path))
    return path


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_hand_built_log_with_categorical_values_errors_and_missing_scores(tmp_path, fmt):
    _require_inspect()
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.scorer import Score

    from judgeaudit.interop.inspect import LogCounts

    def sample(sid, epoch=1, score=None, error=None):
        return EvalSample(id=sid, epoch=epoch, input="q", target="t", scores=score and {"match": score},
                          error=error and EvalError(message=error, traceback="", traceback_ansi=""))

    path = _hand_log(tmp_path / f"hand.{fmt}", [
        sample(1, score=Score(value="C", explanation="right")),
        sample(2, score=Score(value="I")),
        sample(2, epoch=2, score=Score(value="P")),
        sample(3, error="RuntimeError: boom\nTraceback ..."),
        sample(4),
        sample(5, score=Score(value="N")),
        sample(6, score=Score.unscored(reason="grader_failed", explanation="no grade found")),
    ])
    judge = make_judge(f"replay:inspect:{path}?scale=0,1")
    assert judge.log_counts == LogCounts(samples=7, scored=4, unscored=1, errors=2)
    asked = [("1", 0), ("2", 0), ("2", 1), ("3", 0), ("4", 0), ("5", 0), ("6", 0)]
    got = {(v.request_id, v.epoch): v for v in asyncio.run(judge.judge(
        [JudgeRequest(request_id=r, epoch=e) for r, e in asked]))}
    # Inspect's value_to_float C=1, I=0, P=0.5, N=0, on the 0–1 scale the spec gives (P needs one)
    assert {k: got[k].score for k in asked} == {("1", 0): 1.0, ("2", 0): 0.0, ("2", 1): 0.5, ("3", 0): None,
                                                ("4", 0): None, ("5", 0): 0.0, ("6", 0): None}
    with pytest.raises(InputError, match=r"field 'scale'.*declares no scale"):
        make_judge(f"replay:inspect:{path}")
    assert got[("1", 0)].rationale == "right"
    assert got[("3", 0)].error == "Inspect sample error: RuntimeError: boom"
    assert got[("4", 0)].error == "no 'match' score in the Inspect log"
    assert got[("6", 0)].error is None and not got[("6", 0)].parse_ok and got[("6", 0)].rationale == "no grade found"
    assert [k for k in asked if got[k].parse_ok] == [("1", 0), ("2", 0), ("2", 1), ("5", 0)]


def test_pairwise_answers_numeric_scales_and_bad_values(tmp_path):
    _require_inspect()
    from inspect_ai.log import EvalSample
    from inspect_ai.scorer import Score

    def sample(sid, value, answer=None):
        return EvalSample(id=sid, epoch=1, input="q", target="t", scores={"s": Score(value=value, answer=answer)})

    pairs = _hand_log(tmp_path / "pairs.json", [sample("p1", "C", answer="B"), sample("p2", "tie"),
                                                sample("p3", "a")])
    judge = make_judge(f"replay:inspect:{pairs}")
    out = asyncio.run(judge.judge([JudgeRequest(request_id=p, form="pairwise", prompt="q", response_a="x",
                                                response_b="y") for p in ("p1", "p2", "p3")]))
    assert [v.choice for v in out] == ["B", "tie", "A"] and all(v.parse_ok for v in out)

    numbers = _hand_log(tmp_path / "numbers.json", [sample("n1", 0.25), sample("n2", 1), sample("n3", 0)])
    judge = make_judge(f"replay:inspect:{numbers}?scale=0,1")
    out = asyncio.run(judge.judge([JudgeRequest(request_id=n) for n in ("n1", "n2", "n3")]))
    assert [v.score for v in out] == [0.25, 1.0, 0.0]   # read on the scale given, never moved onto 1–9
    # without a scale, a number of a scorer that declares none is refused: the error names the log and the sample
    with pytest.raises(InputError, match=r"numbers.json:1: field 'scale': .*'n1' and the log declares no scale"):
        make_judge(f"replay:inspect:{numbers}")
    with pytest.raises(InputError, match=r"field 'scale'"):
        make_judge(f"replay:inspect:{numbers}?scale=1,0")
    with pytest.raises(InputError, match=r"field 'scorer'.*no scorer 'other'"):
        make_judge(f"replay:inspect:{numbers}?scorer=other")
    with pytest.raises(InputError, match=r"field 'sorer'.*unknown option 'sorer'"):
        make_judge(f"replay:inspect:{numbers}?sorer=s")

    bad = _hand_log(tmp_path / "bad.json", [sample("x1", "C"), sample("x2", {"acc": 1.0})])
    with pytest.raises(InputError, match=r"bad.json:2: field 'value': sample 'x2' \(epoch 1\): .*list or mapping"):
        make_judge(f"replay:inspect:{bad}")
    text = _hand_log(tmp_path / "text.json", [sample("y1", "maybe")])
    with pytest.raises(InputError, match=r"text.json:1: field 'value': .*'maybe' is not C, I, P, N, A, B, tie"):
        make_judge(f"replay:inspect:{text}")
    with pytest.raises(InputError, match="file not found"):
        make_judge(f"replay:inspect:{tmp_path}/missing.eval")
    with pytest.raises(InputError, match=r"empty.eval: field 'samples': .*no samples"):
        make_judge(f"replay:inspect:{_hand_log(tmp_path / 'empty.eval', [])}")
    with pytest.raises(InputError, match=r"garbage.eval: .*cannot read the Inspect eval log"):
        (tmp_path / "garbage.eval").write_bytes(b"not a zip")
        make_judge(f"replay:inspect:{tmp_path / 'garbage.eval'}")
