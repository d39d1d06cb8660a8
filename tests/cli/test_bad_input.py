"""Bad input, table-driven, over every command that reads files.

Each case runs one command on one malformed input and asserts: exit 2, exactly one ``error:`` line
naming the file, the line and the field, no traceback, and nothing on disk changed (no partial
output, no stored row, study answer or input byte lost). Cases run in-process with typer's
CliRunner (``main()``'s InputError handling is reproduced in ``_invoke``); a few run through ``cli.main``
itself (the ``cli_main`` fixture), and the Ctrl-C test below starts the real entry point in a subprocess.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.errors import InputError
from judgeaudit.probes.io import bundled_probes_path, read_probes
from judgeaudit.records import Verdict
from judgeaudit.runtime.store import CallStore


def _invoke(argv: list[str]) -> tuple[int, str]:
    """Run the CLI in-process the way ``judgeaudit.cli.main`` does: an InputError is one line, exit 2."""
    r = CliRunner().invoke(app, [str(a) for a in argv])
    out = r.output
    if isinstance(r.exception, InputError):
        return 2, out + f"error: {r.exception}\n"
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        return 1, out + "Traceback (most recent call last):\n" + "".join(traceback.format_exception(r.exception))
    return r.exit_code, out


def _snapshot(root: Path) -> dict[str, str]:
    """Every file and folder under ``root`` with its content hash (folders: 'dir')."""
    out = {}
    for p in sorted(root.rglob("*")):
        out[str(p.relative_to(root))] = "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


# --- input files ----------------------------------------------------------------------------------------

BUNDLED_LINES = bundled_probes_path().read_text(encoding="utf-8").splitlines()


class Files:
    """Valid inputs in one folder; each case breaks one of them."""

    def __init__(self, root: Path):
        self.root = root

    def write(self, name: str, text: str | bytes) -> Path:
        p = self.root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        (p.write_bytes if isinstance(text, bytes) else p.write_text)(text)
        return p

    def items(self, rows: list[dict] | None = None) -> Path:
        rows = rows or [{"item_id": "i1", "text": "The method may help."}, {"item_id": "i2", "text": "It helps."}]
        return self.write("items.jsonl", "".join(json.dumps(r) + "\n" for r in rows))

    def probes(self, n: int = 12) -> Path:
        return self.write("probes.jsonl", "\n".join(BUNDLED_LINES[:n]) + "\n")

    def probe_ids(self, n: int = 4) -> list[str]:
        return [json.loads(x)["probe_id"] for x in BUNDLED_LINES[:n]]

    def answers(self, rows: list[dict] | None = None) -> Path:
        if rows is None:
            rows = [{"probe_id": pid, "annotator_id": a, "ordinal": k, "direction": "edited", "same_facts": True}
                    for pid in self.probe_ids(4) for k, a in enumerate(("a1", "a2"), 1)]
        return self.write("answers.jsonl", "".join(json.dumps(r) + "\n" for r in rows))

    def study(self) -> Path:
        from judgeaudit.probes.annotate import init_study
        from judgeaudit.probes.annotate.db import StudyDB

        db = self.root / "study.sqlite"
        tokens = init_study(db, read_probes(self.probes(4)), 2, seed=3)
        s = StudyDB(db)
        who = s.annotator_for(tokens.annotator_tokens["a1"])
        s.save_answer(who, s.item_at(who, 1)["item_idx"], "neither", "", "kept", True)
        s.conn.close()
        return db

    def store(self, n: int = 3, name: str = "calls.sqlite", raw: str = "") -> Path:
        p = self.root / name
        with CallStore(p) as cs:
            for i in range(n):
                cs.put(Verdict(call_key=f"k{i:04d}", request_id=f"r{i}", judge_id="j", score=5.0, parse_ok=True,
                               raw=raw or None))
        return p

    def corrupted_store(self) -> Path:
        p = self.store(n=400, raw="x" * 300)
        data = bytearray(p.read_bytes())
        page = 4096
        assert len(data) > 8 * page
        import random

        rng = random.Random(7)
        for off in range(3 * page, 6 * page):
            data[off] = rng.randrange(256)
        p.write_bytes(bytes(data))
        return p

    def plain_sqlite(self) -> Path:
        p = self.root / "other.sqlite"
        c = sqlite3.connect(p)
        c.execute("CREATE TABLE notes (x TEXT)")
        c.execute("INSERT INTO notes VALUES ('keep me')")
        c.commit()
        c.close()
        return p

    def replay(self, rows: list[dict]) -> Path:
        return self.write("replay.jsonl", "".join(json.dumps(r) + "\n" for r in rows))

    def yaml(self, extra: str = "", *, raw: bytes | None = None) -> Path:
        self.probes()
        if raw is not None:
            return self.write("exp.yaml", raw)
        return self.write("exp.yaml", "analysis: validity\nout: out\nprobes: probes.jsonl\n"
                                      "judges:\n  - reference:constant\nbootstrap: 20\n" + extra)

    def source(self) -> Path:
        return self.write("qa.jsonl", json.dumps({"question": "2+2?", "answer": "4"}) + "\n")


NON_UTF8 = b'{"item_id": "i1", "text": "fine"}\n{"item_id": "i2", "text": "caf\xe9 \xff"}\n'
BASES_NON_UTF8 = (b'{"claim": "c", "evidence": "e", "group": "g", "domain": "d"}\n'
                  b'{"claim": "caf\xe9", "evidence": "e", "group": "g", "domain": "d"}\n')


def _non_utf8_probe_file(f: Files, name: str) -> Path:
    first, second = BUNDLED_LINES[0].encode(), BUNDLED_LINES[1].encode()
    second = second.replace(b'"domain_extension"', b'"domain_extension\xff"', 1) if b'"domain_extension"' in second \
        else second[:-2] + b"\xff" + second[-2:]
    return f.write(name, first + b"\n" + second + b"\n")


def _replay_rows(f: Files, **override) -> list[dict]:
    ids = [json.loads(x)["probe_id"] for x in BUNDLED_LINES[:12]] + \
        list(dict.fromkeys(json.loads(x)["base_id"] for x in BUNDLED_LINES[:12]))
    rows = [{"request_id": i, "score": 5} for i in ids]
    rows[1].update(override)
    return rows


# --- the table ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    item: int                                 # issue 10 item
    argv: Callable[[Files], list]             # builds the inputs, returns the command line
    needles: tuple[str, ...]                  # in the one error line: file, line, field
    via: str = "inproc"


def _validity(f: Files, *extra, judge: str = "reference:constant", probes: Path | None = None) -> list:
    return ["validity", "run", "--judge", judge, "--probes", probes or f.probes(), "--out", f.root / "out",
            "--bootstrap", "20", "--regrade", "0", *extra]


def _cap_build(f: Files, *extra, out: Path | None = None) -> list:
    return ["cap", "build", "--source", f.source(), "--generator", "api:openai/gen", "--gate",
            "api:anthropic/gate", "--api-base", "http://127.0.0.1:9/v1", "--out", out or f.root / "tb.jsonl",
            "--store", f.root / "tb.calls.sqlite", *extra]


def _merge(f: Files, *extra, answers: Path | None = None, out: Path | None = None) -> list:
    return ["probes", "merge", "--probes", f.probes(4), "--answers", answers or f.answers(), "--out",
            out or f.root / "labelled.jsonl", *extra]


def _export(f: Files, out) -> list:
    db = f.study()
    return ["probes", "annotate", "export", "--db", db, "--out", out(f, db) if callable(out) else out]


def _symlink(f: Files, target: Path) -> Path:
    link = f.root / "link.sqlite"
    link.symlink_to(target)
    return link


def _hardlink(f: Files, target: Path) -> Path:
    link = f.root / "sub" / "hard.sqlite"
    link.parent.mkdir()
    os.link(target, link)
    return link


def _judge_into_own_input(f: Files) -> list:
    (f.root / "o").mkdir()
    items = f.items().rename(f.root / "o" / "verdicts.jsonl")
    return ["judge", "--judge", "reference:constant", "--input", items, "--out", f.root / "o"]


def _yaml_out_taken(f: Files) -> Path:
    _a_file(f)
    p = f.yaml()
    p.write_text(p.read_text().replace("out: out", "out: taken"))
    return p


def _a_file(f: Files) -> Path:
    return f.write("taken", "I am a file, not a folder\n")


def _a_dir(f: Files) -> Path:
    d = f.root / "taken"
    d.mkdir()
    return d


def _batch_ingest(f: Files, bad_line: str) -> list:
    """A store with deferred calls of an api judge (no call made) and a results file whose line 2 is bad."""
    from judgeaudit.interop.batch import BatchWriter
    from judgeaudit.judges import make_judge
    from judgeaudit.records import JudgeRequest

    judge = make_judge("api:openai/fake-model", api_base="http://127.0.0.1:9/v1")
    reqs = [JudgeRequest(request_id=f"r{i}", form="graded", text=f"text {i}") for i in range(2)]
    keys = [judge.key(r) for r in reqs]
    with CallStore(f.root / "calls.sqlite") as cs:
        BatchWriter("openai", f.root / "batch.jsonl").defer(judge, dict(zip(keys, reqs, strict=True)), cs)
    good = {"id": "b0", "custom_id": keys[0], "response": {"status_code": 200, "request_id": "q0", "body": {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Score: 3"}}]}}, "error": None}
    out = f.write("output.jsonl", json.dumps(good) + "\n" + bad_line.replace("KEY", keys[1]) + "\n")
    return ["batch", "ingest", out, "--store", f.root / "calls.sqlite"]


def _promptfoo(f: Files, grading: dict) -> list:
    doc = {"evalId": "e", "results": {"version": 3, "results": [
        {"testIdx": 0, "promptIdx": 0, "vars": {"id": "i1"}, "provider": {"id": "p"}, "gradingResult": grading}]}}
    path = f.write("results.json", json.dumps(doc))
    return ["judge", "--judge", f"replay:promptfoo:{path}", "--input", f.items(), "--out", f.root / "o"]


CASES = [
    # 3. never write over an input or a database
    Case("export-onto-own-db", 3, lambda f: _export(f, lambda f, db: db), ("study.sqlite", "--out")),
    Case("export-onto-db-symlink", 3, lambda f: _export(f, lambda f, db: _symlink(f, db)), ("link.sqlite", "--out")),
    Case("export-onto-db-hardlink", 3, lambda f: _export(f, lambda f, db: _hardlink(f, db)), ("hard.sqlite", "--out")),
    Case("export-onto-a-call-store", 3, lambda f: _export(f, lambda f, db: f.store()), ("calls.sqlite", "--out")),
    Case("merge-onto-its-answers", 3, lambda f: _merge(f, out=f.answers()), ("answers.jsonl", "--out")),
    Case("merge-onto-its-probes", 3, lambda f: _merge(f, out=f.probes(4)), ("probes.jsonl", "--out")),
    Case("store-export-onto-a-study", 3, lambda f: ["store", "export", "--store", f.store(), "--out",
                                                     f.study().rename(f.root / "s.jsonl")], ("s.jsonl", "--out")),
    Case("judge-out-over-its-input", 3, lambda f: _judge_into_own_input(f), ("verdicts.jsonl", "--out")),
    Case("judge-store-is-a-study", 3, lambda f: ["judge", "--judge", "reference:constant", "--input", f.items(),
                                                  "--out", f.root / "o", "--store", f.study()],
         ("study.sqlite", "not a judgeaudit call store")),
    Case("stats-on-a-study-db", 3, lambda f: ["store", "stats", "--store", f.study()],
         ("study.sqlite", "not a judgeaudit call store")),
    Case("stats-on-other-sqlite", 3, lambda f: ["store", "stats", "--store", f.plain_sqlite()],
         ("other.sqlite", "not a judgeaudit call store")),
    Case("export-on-other-sqlite", 3, lambda f: ["store", "export", "--store", f.plain_sqlite(), "--out",
                                                  f.root / "x.jsonl"], ("other.sqlite", "not a judgeaudit call store")),
    Case("annotate-export-from-other-sqlite", 3, lambda f: ["probes", "annotate", "export", "--db", f.plain_sqlite(),
                                                             "--out", f.root / "a.jsonl"],
         ("other.sqlite", "not an annotation study database")),
    Case("annotate-serve-on-other-sqlite", 3, lambda f: ["probes", "annotate", "serve", "--db", f.plain_sqlite()],
         ("other.sqlite", "not an annotation study database")),
    # 4. tracebacks → one line: non-UTF-8 input
    Case("utf8-judge-items", 4, lambda f: ["judge", "--judge", "reference:constant", "--input",
                                            f.write("bad.jsonl", NON_UTF8), "--out", f.root / "o"],
         ("bad.jsonl:2", "UTF-8")),
    Case("utf8-validity-probes", 4, lambda f: _validity(f, probes=_non_utf8_probe_file(f, "bad.jsonl")),
         ("bad.jsonl:2", "UTF-8")),
    Case("utf8-probes-build-bases", 4, lambda f: ["probes", "build", "--bases", f.write("bad.jsonl", BASES_NON_UTF8),
                                                   "--generator", "reference:constant", "--verifier",
                                                   "reference:length", "--audited-family", "gemma", "--out",
                                                   f.root / "b"], ("bad.jsonl:2", "UTF-8")),
    Case("utf8-merge-answers", 4, lambda f: _merge(f, answers=f.write("bad.jsonl", NON_UTF8)),
         ("bad.jsonl:2", "UTF-8")),
    Case("utf8-merge-probes", 4, lambda f: ["probes", "merge", "--probes", _non_utf8_probe_file(f, "bad.jsonl"),
                                             "--answers", f.answers(), "--out", f.root / "l.jsonl"],
         ("bad.jsonl:2", "UTF-8")),
    Case("utf8-annotate-init", 4, lambda f: ["probes", "annotate", "init", "--probes",
                                              _non_utf8_probe_file(f, "bad.jsonl"), "--annotators", "2", "--db",
                                              f.root / "new.sqlite"], ("bad.jsonl:2", "UTF-8")),
    Case("utf8-run-yaml", 4, lambda f: ["run", f.yaml(raw=b"analysis: validity\nout: out\n# caf\xe9\n"
                                                         b"judges: [reference:constant]\n")],
         ("exp.yaml:3", "UTF-8")),
    Case("utf8-replay", 4, lambda f: _validity(f, judge=f"replay:{f.write('r.jsonl', NON_UTF8)}"),
         ("r.jsonl:2", "UTF-8")),
    Case("utf8-cap-build-source", 4, lambda f: ["cap", "build", "--source", f.write("bad.jsonl", NON_UTF8),
                                                 "--generator", "api:openai/g", "--gate", "api:anthropic/h",
                                                 "--out", f.root / "tb.jsonl"], ("bad.jsonl:2", "UTF-8")),
    # 4. wrong JSON types
    Case("judge-text-is-a-number", 4, lambda f: ["judge", "--judge", "reference:constant", "--input",
                                                  f.items([{"item_id": "i1", "text": "ok"},
                                                           {"item_id": "i2", "text": 123}]), "--out", f.root / "o"],
         ("items.jsonl:2", "field 'text'")),
    Case("judge-item-id-is-true", 4, lambda f: ["judge", "--judge", "reference:constant", "--input",
                                                 f.items([{"item_id": True, "text": "ok"}]), "--out", f.root / "o"],
         ("items.jsonl:1", "field 'item_id'")),
    Case("merge-same-facts-is-text", 4, lambda f: _merge(f, answers=f.answers(
        [{"probe_id": f.probe_ids(1)[0], "annotator_id": "a1", "direction": "edited", "same_facts": "no"}])),
         ("answers.jsonl:1", "field 'same_facts'")),
    Case("merge-mixed-annotator-ids", 4, lambda f: _merge(f, answers=f.answers(
        [{"probe_id": f.probe_ids(1)[0], "annotator_id": "a1", "direction": "edited", "same_facts": True},
         {"probe_id": f.probe_ids(1)[0], "annotator_id": 2, "direction": "edited", "same_facts": True}])),
         ("answers.jsonl:2", "field 'annotator_id'")),
    # 4. damaged stores
    Case("stats-on-corrupted-store", 4, lambda f: ["store", "stats", "--store", f.corrupted_store()],
         ("calls.sqlite", "damaged")),
    Case("judge-on-corrupted-store", 4, lambda f: ["judge", "--judge", "reference:constant", "--input", f.items(),
                                                    "--out", f.root / "o", "--store", f.corrupted_store()],
         ("calls.sqlite", "damaged")),
    # 4. replay epochs
    Case("replay-epoch-text", 4, lambda f: _validity(f, judge=f"replay:{f.replay(_replay_rows(f, epoch='x'))}"),
         ("replay.jsonl:2", "field 'epoch'")),
    Case("replay-epoch-blank", 4, lambda f: _validity(f, judge=f"replay:{f.replay(_replay_rows(f, epoch=''))}"),
         ("replay.jsonl:2", "field 'epoch'")),
    # 4. an existing file where a folder is expected …
    Case("judge-out-is-a-file", 4, lambda f: ["judge", "--judge", "reference:constant", "--input", f.items(),
                                               "--out", _a_file(f)], ("taken", "--out")),
    Case("validity-out-is-a-file", 4, lambda f: ["validity", "run", "--judge", "reference:constant", "--probes",
                                                  f.probes(), "--out", _a_file(f), "--bootstrap", "20"],
         ("taken", "--out")),
    Case("vp-out-is-a-file", 4, lambda f: ["vp", "audit", "--set", "jsonl:" + str(f.write(
        "vp.jsonl", "".join(json.dumps({"text": "t" * (i + 1), "label": i % 2}) + "\n" for i in range(20))))
        + "?text=text&label=label", "--out", _a_file(f), "--permutations", "0"], ("taken", "--out")),
    Case("cap-run-out-is-a-file", 4, lambda f: ["cap", "run", "--set", "llmbar:" + str(
        Path(__file__).resolve().parents[2] / "src/judgeaudit/data/llmbar"), "--published", "--bootstrap", "20",
        "--out", _a_file(f)], ("taken", "--out")),
    Case("probes-build-out-is-a-file", 4, lambda f: ["probes", "build", "--bases", f.write(
        "bases.jsonl", json.dumps({"claim": "c", "evidence": "e", "group": "g", "domain": "d"}) + "\n"),
        "--generator", "reference:constant", "--verifier", "reference:length", "--audited-family", "gemma",
        "--out", _a_file(f)], ("taken", "--out")),
    Case("agreement-out-is-a-file", 4, lambda f: ["probes", "agreement", "--probes", f.probes(), "--out", _a_file(f)],
         ("taken", "--out")),
    Case("run-yaml-out-is-a-file", 4, lambda f: ["run", _yaml_out_taken(f)], ("exp.yaml:2", "field 'out'")),
    Case("demo-out-is-a-file", 4, lambda f: ["demo", "--out", _a_file(f)], ("taken", "--out")),
    # … and a folder where a file is expected
    Case("merge-out-is-a-folder", 4, lambda f: _merge(f, out=_a_dir(f)), ("taken", "--out")),
    Case("export-out-is-a-folder", 4, lambda f: _export(f, lambda f, db: _a_dir(f)), ("taken", "--out")),
    Case("store-export-out-is-a-folder", 4, lambda f: ["store", "export", "--store", f.store(), "--out",
                                                        _a_dir(f)], ("taken", "--out")),
    Case("cap-build-out-is-a-folder", 4, lambda f: _cap_build(f, out=_a_dir(f)), ("taken", "--out")),
    # 5. nonsense options, the same rule on the CLI and in YAML
    Case("s-floor-5", 5, lambda f: _validity(f, "--s-floor", "5"), ("--s-floor", "between 0 and 1")),
    Case("s-floor-nan", 5, lambda f: _validity(f, "--s-floor", "nan"), ("--s-floor", "between 0 and 1")),
    Case("bar-minus-1", 5, lambda f: _validity(f, "--bar", "-1"), ("--bar", "between 0 and 1")),
    Case("bootstrap-minus-5", 5, lambda f: _validity(f, "--bootstrap", "-5"), ("--bootstrap", "≥ 0")),
    Case("regrade-minus-1", 5, lambda f: _validity(f, "--regrade", "-1"), ("--regrade", "≥ 0")),
    Case("concurrency-0", 5, lambda f: _validity(f, "--concurrency", "0"), ("--concurrency", "≥ 1")),
    Case("agreement-bar-2", 5, lambda f: ["probes", "agreement", "--probes", f.probes(), "--bar", "2"],
         ("--bar", "between 0 and 1")),
    Case("yaml-s-floor-5", 5, lambda f: ["run", f.yaml("s_floor: 5\n")], ("exp.yaml:7", "s_floor", "between 0 and 1")),
    Case("yaml-concurrency-0", 5, lambda f: ["run", f.yaml("concurrency: 0\n")],
         ("exp.yaml:7", "concurrency", "≥ 1")),
    Case("judge-retries-minus-1", 5, lambda f: ["judge", "--judge", "reference:constant", "--input", f.items(),
                                                 "--out", f.root / "o", "--retries", "-1"], ("--retries", "≥ 0")),
    Case("judge-timeout-0", 5, lambda f: ["judge", "--judge", "reference:constant", "--input", f.items(),
                                           "--out", f.root / "o", "--timeout", "0"], ("--timeout", "> 0")),
    Case("cap-build-threshold-9", 5, lambda f: _cap_build(f, "--threshold", "9"), ("--threshold", "between 1 and 5")),
    Case("cap-build-threshold-0", 5, lambda f: _cap_build(f, "--threshold", "0"), ("--threshold", "between 1 and 5")),
    Case("cap-build-max-items-minus-1", 5, lambda f: _cap_build(f, "--max-items", "-1"), ("--max-items", "≥ 1")),
    Case("cap-build-retries-minus-1", 5, lambda f: _cap_build(f, "--retries", "-1"), ("--retries", "≥ 0")),
    Case("replay-score-1e308", 5, lambda f: _validity(f, judge=f"replay:{f.replay(_replay_rows(f, score=1e308))}"),
         ("replay.jsonl:2", "field 'score'")),
    Case("replay-score-minus-7", 5, lambda f: _validity(f, judge=f"replay:{f.replay(_replay_rows(f, score=-7))}"),
         ("replay.jsonl:2", "field 'score'")),
    Case("replay-score-inf", 5, lambda f: _validity(f, judge=f"replay:{f.replay(_replay_rows(f, score=float('inf')))}"),
         ("replay.jsonl:2", "field 'score'")),
    Case("replay-score-nan", 5, lambda f: _validity(f, judge=f"replay:{f.replay(_replay_rows(f, score=float('nan')))}"),
         ("replay.jsonl:2", "field 'score'")),
    Case("replay-score-inf-csv", 5, lambda f: _validity(f, judge="replay:" + str(f.write(
        "replay.csv", "request_id,score\n" + "".join(f"{r['request_id']},{'inf' if i == 1 else 5}\n"
                                                       for i, r in enumerate(_replay_rows(f)))))),
         ("replay.csv:3", "field 'score'", "outside")),
    Case("replay-score-text", 5, lambda f: _validity(f, judge=f"replay:{f.replay(_replay_rows(f, score='high'))}"),
         ("replay.jsonl:2", "field 'score'")),
    Case("replay-duplicate-id", 5, lambda f: _validity(f, judge="replay:" + str(f.replay(
        _replay_rows(f) + [{"request_id": _replay_rows(f)[0]["request_id"], "score": 9}]))),
         ("replay.jsonl:", "line 1", "field 'request_id'")),
    Case("merge-annotators-twice", 5, lambda f: _merge(f, "--annotators", "a1,a1,a2"), ("--annotators", "a1")),
    Case("merge-duplicate-answer", 5, lambda f: _merge(f, answers=f.answers(
        [{"probe_id": f.probe_ids(1)[0], "annotator_id": "a1", "direction": "edited", "same_facts": True},
         {"probe_id": f.probe_ids(1)[0], "annotator_id": "a1", "direction": "original", "same_facts": True}])),
         ("answers.jsonl:2", "line 1", "field 'annotator_id'")),
    # 4. every option is checked before the first call, with judgeaudit's upper bounds (CLI and YAML alike)
    Case("world-votes-huge", 5, lambda f: ["world", "run", "--set", "halueval:" + str(f.root / "none"), "--judge",
                                            "reference:constant", "--votes", "99999999999", "--out", f.root / "o"],
         ("--votes", "between 1 and 25")),
    Case("world-bootstrap-huge", 5, lambda f: ["world", "run", "--set", "halueval:" + str(f.root / "none"),
                                                "--judge", "reference:constant", "--bootstrap", "100000000000",
                                                "--out", f.root / "o"], ("--bootstrap", "at most 100000")),
    Case("loop-votes-huge", 5, lambda f: ["loop", "run", "--task", "ifeval", "--data", f.root / "none.jsonl",
                                           "--responder", "reference:echo", "--regulator", "control", "--votes",
                                           "99999999999", "--out", f.root / "o"], ("--votes", "between 1 and 25")),
    Case("validity-bootstrap-huge", 5, lambda f: _validity(f, "--bootstrap", "100000000000"),
         ("--bootstrap", "at most 100000")),
    Case("yaml-bootstrap-huge", 5, lambda f: ["run", f.yaml(raw=b"analysis: validity\nout: out\nprobes: probes.jsonl\n"
                                                              b"judges:\n  - reference:constant\n"
                                                              b"bootstrap: 100000000000\n")],
         ("exp.yaml:6", "bootstrap", "at most 100000")),
    Case("judge-timeout-huge", 5, lambda f: ["judge", "--judge", "reference:constant", "--input", f.items(),
                                              "--out", f.root / "o", "--timeout", "1e9"], ("--timeout", "at most 3600")),
    Case("judge-concurrency-huge", 5, lambda f: ["judge", "--judge", "reference:constant", "--input", f.items(),
                                                  "--out", f.root / "o", "--concurrency", "100000"],
         ("--concurrency", "at most 1024")),
    # 5. tracebacks → one line: an output name that is not UTF-8 (nothing written)
    Case("main-judge-out-not-utf8", 5, lambda f: ["judge", "--judge", "reference:constant", "--input",
                                                         f.items(), "--out", f.root / os.fsdecode(b"o\xff")],
         ("--out", "not UTF-8", "o\\xff"), via="main"),
    Case("main-validity-out-not-utf8", 5, lambda f: ["validity", "run", "--judge", "reference:constant",
                                                            "--probes", f.probes(), "--out",
                                                            f.root / os.fsdecode(b"r\xe9sultats"), "--bootstrap",
                                                            "20"], ("--out", "not UTF-8"), via="main"),
    # 6. world, loop and card experiments in YAML: the same rules, the YAML field and line in every error
    Case("yaml-missing-probe-file", 6, lambda f: ["run", f.yaml(raw=b"analysis: validity\nout: out\n"
                                                                  b"probes: missing.jsonl\njudges: [reference:constant]\n")],
         ("exp.yaml:3", "field 'probes'", "missing.jsonl", "not found")),
    Case("yaml-world-votes-huge", 6, lambda f: ["run", f.yaml(raw=b"analysis: world\nout: out\nset: halueval:.\n"
                                                                b"judges: [reference:constant]\nvotes: 99999999999\n")],
         ("exp.yaml:5", "field 'votes'", "between 1 and 25")),
    Case("yaml-world-unknown-arm", 6, lambda f: ["run", f.yaml(raw=b"analysis: world\nout: out\nset: halueval:.\n"
                                                                 b"judges: [reference:constant]\narms: [blind, nope]\n")],
         ("exp.yaml:5", "field 'arms'", "unknown arm 'nope'")),
    Case("yaml-world-missing-set", 6, lambda f: ["run", f.yaml(raw=b"analysis: world\nout: out\nset: halueval:gone\n"
                                                                 b"judges: [reference:constant]\n")],
         ("exp.yaml:3", "field 'set'", "not found")),
    Case("yaml-loop-missing-data", 6, lambda f: ["run", f.yaml(raw=b"analysis: loop\nout: out\ntask: ifeval\n"
                                                                 b"data: gone.jsonl\nresponder: reference:echo\n"
                                                                 b"regulators: [control]\n")],
         ("exp.yaml:4", "field 'data'", "not found")),
    Case("yaml-loop-timeout-0", 6, lambda f: ["run", f.yaml(raw=b"analysis: loop\nout: out\ntask: ifeval\n"
                                                              b"data: .\nresponder: reference:echo\n"
                                                              b"regulators: [control]\ntimeout: 0\n")],
         ("exp.yaml:7", "field 'timeout'", "> 0")),
    Case("yaml-card-missing-from", 6, lambda f: ["run", f.yaml(raw=b"analysis: card\nout: out\njudge: j\n"
                                                                 b"from: [gone]\n")],
         ("exp.yaml:4", "field 'from", "not found")),
    # provider batch results and promptfoo output files
    Case("batch-ingest-not-json", 10, lambda f: _batch_ingest(f, "{not json"), ("output.jsonl:2", "field 'line'")),
    Case("batch-ingest-status-text", 10, lambda f: _batch_ingest(
        f, json.dumps({"id": "b1", "custom_id": "KEY", "response": {"status_code": "200", "body": {}}, "error": None})),
        ("output.jsonl:2", "field 'response.status_code'")),
    Case("batch-ingest-unknown-id", 10, lambda f: _batch_ingest(
        f, json.dumps({"custom_id": "f" * 64, "result": {"type": "expired"}})), ("output.jsonl:2", "field 'custom_id'")),
    Case("replay-promptfoo-pass-text", 10, lambda f: _promptfoo(f, {"pass": "yes", "score": 1, "reason": "r"}),
         ("results.json:1", "field 'gradingResult.pass'")),
    Case("replay-promptfoo-score-off-range", 10, lambda f: _promptfoo(f, {"pass": True, "score": 7, "reason": "r"}),
         ("results.json:1", "field 'gradingResult.score'", "?scale=LO,HI")),
    # 7. requests export: the analysis, its inputs and the judge are checked before anything is written
    Case("requests-export-unknown-analysis", 7, lambda f: ["requests", "export", "--analysis", "loop", "--out",
                                                           f.root / "o"], ("--analysis", "unknown analysis 'loop'")),
    Case("requests-export-bad-probe-line", 7, lambda f: ["requests", "export", "--analysis", "validity", "--probes",
                                                         f.write("probes.jsonl", BUNDLED_LINES[0] + "\n{not json\n"),
                                                         "--out", f.root / "o"], ("probes.jsonl:2",)),
    Case("requests-export-cap-no-set", 7, lambda f: ["requests", "export", "--analysis", "cap", "--out", f.root / "o"],
         ("field 'set'", "give at least one --set")),
    Case("requests-export-judge-not-importable", 7, lambda f: ["requests", "export", "--analysis", "validity",
                                                               "--probes", f.probes(), "--judge",
                                                               "python:no_such_module_xyz:grade", "--out", f.root / "o"],
         ("field 'judge'", "python:no_such_module_xyz:grade", "cannot import module 'no_such_module_xyz'")),
    Case("main-judge-python-missing-function", 7, lambda f: ["judge", "--judge", "python:json:no_such_function",
                                                                   "--input", f.items(), "--out", f.root / "o"],
         ("field 'judge'", "module 'json' has no attribute 'no_such_function'"), via="main"),
    # through cli.main, as the real entry point runs it
    Case("main-export-onto-own-db", 3, lambda f: _export(f, lambda f, db: db), ("study.sqlite", "--out"),
         via="main"),
    Case("main-utf8-judge-items", 4, lambda f: ["judge", "--judge", "reference:constant", "--input",
                                                       f.write("bad.jsonl", NON_UTF8), "--out", f.root / "o"],
         ("bad.jsonl:2", "UTF-8"), via="main"),
    Case("main-s-floor-5", 5, lambda f: _validity(f, "--s-floor", "5"), ("--s-floor", "between 0 and 1"),
         via="main"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path: Path, cli_main) -> None:
    f = Files(tmp_path)
    argv = case.argv(f)
    before = _snapshot(tmp_path)
    if case.via == "main":
        p = cli_main(*argv)
        rc, out = p.returncode, p.stdout + p.stderr
    else:
        rc, out = _invoke(argv)
    assert "Traceback" not in out, out
    errors = [ln for ln in out.splitlines() if ln.startswith("error:")]
    assert rc == 2 and len(errors) == 1, out
    for needle in case.needles:
        assert needle in errors[0], (needle, errors[0])
    assert _snapshot(tmp_path) == before, "the command changed files on disk"


# --- cases that are not a refusal ----------------------------------------------------------------------


def _break_row(store: Path, key: str, blob: str) -> None:
    c = sqlite3.connect(store)
    c.execute("UPDATE calls SET verdict=? WHERE call_key=?", (blob, key))
    c.commit()
    c.close()


@pytest.mark.parametrize("blob", ["{not json", json.dumps({"call_key": "k0001", "request_id": "r1", "judge_id": "j",
                                                            "scorez": 5, "format": 9})],
                         ids=["not-json", "another-version"])
def test_unreadable_store_row_is_skipped_counted_and_named(tmp_path: Path, blob: str) -> None:
    f = Files(tmp_path)
    store = f.store(n=3)
    _break_row(store, "k0001", blob)
    rc, out = _invoke(["store", "stats", "--store", store])
    assert rc == 0 and "Traceback" not in out, out
    assert "skipped 1 unreadable row" in out and "k0001" in out, out
    with CallStore(store) as cs:
        assert sorted(cs.completed(["k0000", "k0001", "k0002"])) == ["k0000", "k0002"]
        assert [r[0] for r in cs.bad_rows] == ["k0001"]
        assert len(cs) == 3   # the bad row is kept, not deleted
    rc, out = _invoke(["store", "export", "--store", store, "--out", tmp_path / "all.jsonl"])
    assert rc == 0, out
    assert [json.loads(x)["call_key"] for x in (tmp_path / "all.jsonl").read_text().splitlines()] == ["k0000", "k0002"]


def test_a_new_answer_replaces_an_unreadable_row(tmp_path: Path) -> None:
    store = Files(tmp_path).store(n=2)
    _break_row(store, "k0001", "{not json")
    with CallStore(store) as cs:
        assert cs.completed(["k0001"]) == {}
        cs.put(Verdict(call_key="k0001", request_id="r1", judge_id="j", score=7.0, parse_ok=True))
        assert cs.completed(["k0001"])["k0001"].score == 7.0


def test_stats_leaves_a_store_byte_for_byte(tmp_path: Path) -> None:
    store = Files(tmp_path).store(n=3)
    before = _snapshot(tmp_path)
    rc, out = _invoke(["store", "stats", "--store", store])
    assert rc == 0, out
    assert _snapshot(tmp_path) == before


def test_yaml_and_cli_share_one_rule(tmp_path: Path) -> None:
    f = Files(tmp_path)
    _, cli_out = _invoke(_validity(f, "--s-floor", "5"))
    _, yaml_out = _invoke(["run", f.yaml("s_floor: 5\n")])
    cli_msg = cli_out.strip().splitlines()[-1].split(": ", 2)[-1]
    yaml_msg = yaml_out.strip().splitlines()[-1].split(": ", 3)[-1]
    assert cli_msg == yaml_msg == "must be between 0 and 1, got 5.0"


def test_cap_build_checks_outputs_before_any_call(tmp_path: Path, fake_server) -> None:
    srv = fake_server(responder=lambda prompt: "4")
    f = Files(tmp_path)
    argv = _cap_build(f, out=_a_dir(f))
    argv[argv.index("--api-base") + 1] = srv.base_url
    rc, out = _invoke(argv)
    assert rc == 2 and len(srv.requests) == 0, out


def test_ctrl_c_while_the_command_line_starts_is_one_line(tmp_path: Path) -> None:
    """SIGINT while the modules are still being imported (numpy loaded, pandas not yet done)."""
    import signal
    import time

    from testkit import interruptible

    for _ in range(20):   # a signal sent after the program finished loading tests nothing: send it again
        # SIGINT at its default in the child, whatever this runner inherited (a background job ignores it)
        proc = interruptible([sys.executable, "-m", "judgeaudit.cli", "validity", "run", "--help"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        maps = Path(f"/proc/{proc.pid}/maps")
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None:
            try:
                if "numpy" in maps.read_text():
                    break
            except OSError:
                pass
            time.sleep(0.002)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        if not (proc.returncode == 0 and "Usage" in out):
            break
    assert "Traceback" not in err, err
    assert proc.returncode == 130, (proc.returncode, err)
    assert err.strip() == "interrupted while starting: nothing was run" or "interrupted" in err.splitlines()[-1]


# --- an output folder this process cannot write; a tracking URI MLflow has no store for --------------------


def _unwritable_folder(tmp_path: Path) -> Path:
    """A folder this process cannot create files in: a read-only folder (as a user), /sys (as root, whom
    file modes do not stop)."""
    ro = tmp_path / "read-only"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        (ro / "probe").touch()
    except OSError:
        return ro
    (ro / "probe").unlink()
    if Path("/sys").is_dir():
        try:
            (Path("/sys") / "judgeaudit-probe").mkdir()
        except OSError:
            return Path("/sys")
    pytest.skip("no folder here refuses this process's writes (root, and /sys is writable)")


@pytest.mark.parametrize("command", ["judge", "validity"])
def test_an_unwritable_out_is_one_line_before_any_call(command, tmp_path: Path, cli_main) -> None:
    f = Files(tmp_path)
    out = _unwritable_folder(tmp_path) / "judgeaudit-out"
    argv = (["judge", "--judge", "reference:constant", "--input", f.items()] if command == "judge" else
            ["validity", "run", "--judge", "reference:constant", "--probes", f.probes(), "--bootstrap", "20"])
    r = cli_main(*argv, "--out", out)
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith(f"error: {out}: field '--out': cannot write into "), lines[0]
    assert not out.exists()


def test_an_unknown_mlflow_scheme_is_one_line_before_the_run(tmp_path: Path, cli_main) -> None:
    pytest.importorskip("mlflow", reason="--mlflow needs the mlflow extra")
    f = Files(tmp_path)
    out = tmp_path / "out"
    r = cli_main("judge", "--judge", "reference:constant", "--input", f.items(), "--out", out)   # works without
    assert r.returncode == 0, r.stderr
    out2 = tmp_path / "out2"
    r = cli_main("validity", "run", "--judge", "reference:constant", "--probes", f.probes(), "--bootstrap", "20",
                 "--out", out2, "--mlflow", "nosuch://x")
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "field '--mlflow'" in lines[0] and "nosuch://x" in lines[0], r.stderr
    assert not out2.exists()                                          # checked before the run: nothing computed


def test_an_experiment_files_unknown_mlflow_scheme_names_its_line(tmp_path: Path, cli_main) -> None:
    pytest.importorskip("mlflow", reason="--mlflow needs the mlflow extra")
    f = Files(tmp_path)
    exp = f.write("exp.yaml", f"analysis: validity\nout: out\nprobes: {f.probes()}\nbootstrap: 20\n"
                              "mlflow: nosuch://x\njudges: [reference:constant]\n")
    r = cli_main("run", exp)
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {exp}:5: field 'mlflow'"), r.stderr
    assert not (tmp_path / "out").exists()
