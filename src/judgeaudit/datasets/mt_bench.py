"""MT-Bench adapter (lm-sys/FastChat ``llm_judge``): questions, pre-generated model answers and
pairwise judgment files, as a pairwise table.

Quirks handled here:

* Two judgment-file shapes are read:

  - FastChat ``model_judgment/*_pair.jsonl`` (GPT-4 as judge): ``model_1``, ``model_2``,
    ``g1_winner`` (model_1 shown as Assistant A) and ``g2_winner`` (order swapped). Both winners
    are already expressed as ``model_1``/``model_2``/``tie``/``error`` (FastChat maps the swapped
    verdict back), so no flip is applied. A position-consistent verdict (g1 == g2) is the label;
    an inconsistent pair is a ``tie`` (FastChat's convention) with ``meta.inconsistent``;
    ``error`` verdicts are dropped and counted in ``df.attrs``.
  - the human-judgment shape (``mt_bench_human_judgments``): one row per judge vote with
    ``model_a``, ``model_b``, ``winner`` (``model_a``/``model_b``/``tie``/``tie (bothbad)``),
    ``judge``, ``turn`` and optionally ``conversation_a``/``conversation_b``. Votes on the same
    (question, model pair, turn) are merged, whichever order the two models were listed in:
    ``human_labels`` keeps every vote and ``label`` is the strict majority (``tie`` when there
    is none). These lists are what the validation-power ceiling ``a_hum`` is computed from.

* ``question_id`` may be an int or a string; ``judge`` may be a list or a stringified list.
* ``turn`` 1 compares the first answers, turn 2 the second answers (the response text of a
  pair is that turn's answer; the prompt is that turn's question).
* The group key is the question id; ``condition_a``/``condition_b`` are the model names (the
  generative condition of each response).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.datasets._common import files_under, first_record, layout_error, require
from judgeaudit.errors import InputError
from judgeaudit.io import iter_jsonl
from judgeaudit.records import PAIRWISE_COLUMNS
from judgeaudit.stats.agreement import majority_label

EXTRA_COLUMNS = ("human_labels", "turn", "judge", "label_source")


QUESTION_FILE = "question.jsonl"


def _base(root: str | Path) -> Path:
    """The MT-Bench data folder: ``root`` when it holds ``question.jsonl``, else the one folder
    below it that does (a FastChat clone: ``fastchat/llm_judge/data/mt_bench``)."""
    root = Path(root)
    if (root / QUESTION_FILE).is_file():
        return root
    if not root.is_dir():
        raise InputError("MT-Bench folder not found", path=root)
    found = sorted(f.parent for f in root.rglob(QUESTION_FILE) if f.is_file())
    if len(found) == 1:
        return found[0]
    if found:
        shown = ", ".join(str(f.relative_to(root)) for f in found[:6])
        raise InputError(f"several {QUESTION_FILE} folders ({shown}); give the MT-Bench one", path=root)
    raise layout_error(f"MT-Bench {QUESTION_FILE} not found under this folder", root)


def load_questions(root: str | Path) -> pd.DataFrame:
    """``question.jsonl`` as a table: ``question_id`` (str), ``category``, ``turns`` (list)."""
    path = _base(root) / QUESTION_FILE
    rows = []
    for line, obj in iter_jsonl(path):
        for key in ("question_id", "turns"):
            require(obj, key, path, line)
        rows.append({"question_id": str(obj["question_id"]), "category": obj.get("category"),
                     "turns": list(obj["turns"])})
    return pd.DataFrame(rows)


def _answer_dirs(judgment_files: list[Path]) -> list[Path]:
    """The ``model_answer`` folders beside each judgment file and one level up."""
    return [f.parent / "model_answer" for f in judgment_files] + \
        [f.parent.parent / "model_answer" for f in judgment_files]


def load_answers(root: str | Path, *, extra_dirs: list[Path] | None = None) -> dict[tuple[str, str], list[str]]:
    """(model, question_id) → list of turn answers, from every ``model_answer/*.jsonl`` found
    (``root/model_answer`` first, then ``extra_dirs``; each folder read once)."""
    root = Path(root)
    out: dict[tuple[str, str], list[str]] = {}
    seen: set[Path] = set()
    for d in [root / "model_answer", *(extra_dirs or [])]:
        if not d.is_dir() or d.resolve() in seen:
            continue
        seen.add(d.resolve())
        for f in sorted(d.glob("*.jsonl")):
            for line, obj in iter_jsonl(f):
                try:
                    turns = obj["choices"][0]["turns"]
                except (KeyError, IndexError, TypeError):
                    raise InputError("expected choices[0].turns", path=f, line=line, field="choices") from None
                model = str(obj.get("model_id") or f.stem)
                out.setdefault((model, str(obj["question_id"])), [str(t) for t in turns])
                out.setdefault((f.stem, str(obj["question_id"])), [str(t) for t in turns])
    return out


def _is_judgment(rec: dict[str, Any] | None) -> bool:
    return rec is not None and ("g1_winner" in rec or ("winner" in rec and "model_a" in rec))


def judgment_files(root: str | Path) -> list[Path]:
    """Every pairwise judgment file under ``root`` (any name, any depth): JSON Lines whose
    records carry ``g1_winner``/``g2_winner`` (FastChat pair files) or ``model_a``/``winner``
    (human judgments). Single-answer grading files and answer files are not pairwise."""
    root = Path(root)
    return [f for f in files_under(root, (".jsonl",)) if _is_judgment(first_record(f))]


def _judge_name(v: Any) -> str:
    if isinstance(v, str) and v.startswith("["):
        try:
            v = ast.literal_eval(v)
        except (ValueError, SyntaxError):
            return v
    if isinstance(v, (list, tuple)):
        return "/".join(str(x) for x in v)
    return str(v)


def _conversation_turn(conv: Any, turn: int) -> str | None:
    if not isinstance(conv, list):
        return None
    said = [m.get("content") for m in conv if isinstance(m, dict) and m.get("role") == "assistant"]
    return str(said[turn - 1]) if len(said) >= turn else None


def load_pairs(root: str | Path, *, judgments: str | Path | None = None, turn: int | None = None) -> pd.DataFrame:
    """Load MT-Bench pairwise judgments as a pairwise table (``PAIRWISE_COLUMNS`` + extras).

    Args:
        root: the MT-Bench folder (``question.jsonl``, ``model_answer/``, judgment files), a
            folder above it (a FastChat clone) holding one ``question.jsonl``, or one judgment
            file (its questions from the nearest folder above it holding ``question.jsonl``).
        judgments: one judgment file (default: every judgment file found under that folder,
            recognised by its records' fields, whatever its name).
        turn: keep only turn 1 or turn 2 (default both).
    """
    root = Path(root)
    if root.is_file() and judgments is None:  # one judgment file given directly
        judgments, root = root, next((d for d in root.parents if (d / QUESTION_FILE).is_file()), root.parent)
    root = _base(root)
    files = [Path(judgments)] if judgments is not None else judgment_files(root)
    if not files:
        raise layout_error("no MT-Bench pairwise judgment file (JSON Lines with g1_winner/g2_winner or "
                           "model_a/model_b/winner) under this folder", root)
    questions = load_questions(root).set_index("question_id")
    answers = load_answers(root, extra_dirs=_answer_dirs(files))
    rows: list[dict[str, Any]] = []
    n_error = 0
    human_votes: dict[tuple[str, str, str, int], dict[str, Any]] = {}
    for f in files:
        if not f.is_file():
            raise InputError("judgment file not found", path=f)
        for line, obj in iter_jsonl(f):
            qid = str(obj.get("question_id"))
            t = int(obj.get("turn", 1))
            if turn is not None and t != turn:
                continue
            if qid not in questions.index:
                raise InputError(f"question_id {qid} is not in question.jsonl", path=f, line=line,
                                 field="question_id")
            if "g1_winner" in obj:
                m1, m2 = str(obj["model_1"]), str(obj["model_2"])
                g1, g2 = obj.get("g1_winner"), obj.get("g2_winner")
                if "error" in (g1, g2):
                    n_error += 1
                    continue
                side = {"model_1": "A", "model_2": "B", "tie": "tie"}
                if g1 not in side or g2 not in side:
                    raise InputError(f"unknown winner {g1!r}/{g2!r}", path=f, line=line, field="g1_winner")
                label = side[g1] if g1 == g2 else "tie"
                ta, tb = answers.get((m1, qid)), answers.get((m2, qid))
                if ta is None or tb is None:
                    missing = m1 if ta is None else m2
                    raise InputError(f"no answers of model {missing!r} for question {qid}", path=f,
                                     line=line, field="model_1" if ta is None else "model_2")
                judge = _judge_name(obj.get("judge"))
                rows.append({
                    "pair_id": f"mt_bench/{qid}/{m1}/{m2}/t{t}/{judge}",
                    "prompt": str(questions.loc[qid, "turns"][t - 1]),
                    "response_a": ta[t - 1], "response_b": tb[t - 1], "label": label,
                    "group": qid, "source_set": "mt_bench", "subset": str(questions.loc[qid, "category"]),
                    "condition_a": m1, "condition_b": m2,
                    "meta": {"file": f.name, "line": line, "inconsistent": g1 != g2, "g1_winner": g1,
                             "g2_winner": g2},
                    "human_labels": None, "turn": t, "judge": judge,
                    "label_source": "llm_judge",
                })
            elif "winner" in obj and "model_a" in obj:
                ma, mb = str(obj["model_a"]), str(obj["model_b"])
                w = str(obj["winner"])
                vote = {"model_a": "A", "model_b": "B"}.get(w, "tie" if w.startswith("tie") else None)
                if vote is None:
                    raise InputError(f"unknown winner {w!r}", path=f, line=line, field="winner")
                m_first, m_second = sorted((ma, mb))
                if (ma, mb) != (m_first, m_second):
                    vote = {"A": "B", "B": "A"}.get(vote, vote)
                key = (qid, m_first, m_second, t)
                entry = human_votes.setdefault(key, {"votes": [], "judges": [], "texts": {}, "file": f.name})
                entry["votes"].append(vote)
                entry["judges"].append(str(obj.get("judge")))
                for m, conv in ((ma, obj.get("conversation_a")), (mb, obj.get("conversation_b"))):
                    txt = _conversation_turn(conv, t)
                    if txt is not None:
                        entry["texts"].setdefault(m, txt)
            else:
                raise InputError("unrecognised judgment record (expected g1_winner/g2_winner or "
                                 "model_a/model_b/winner)", path=f, line=line)
    for (qid, ma, mb, t), e in sorted(human_votes.items()):
        texts = []
        for m in (ma, mb):
            txt = e["texts"].get(m)
            if txt is None:
                ans = answers.get((m, qid))
                if ans is None:
                    raise InputError(f"no answers of model {m!r} for question {qid} (and no conversation "
                                     "in the judgment file)", path=e["file"])
                txt = ans[t - 1]
            texts.append(txt)
        rows.append({
            "pair_id": f"mt_bench/{qid}/{ma}/{mb}/t{t}/human", "prompt": str(questions.loc[qid, "turns"][t - 1]),
            "response_a": texts[0], "response_b": texts[1], "label": majority_label(e["votes"]) or "tie",
            "group": qid, "source_set": "mt_bench", "subset": str(questions.loc[qid, "category"]),
            "condition_a": ma, "condition_b": mb, "meta": {"file": e["file"], "judges": e["judges"]},
            "human_labels": list(e["votes"]), "turn": t, "judge": "human", "label_source": "human_vote",
        })
    if not rows:
        raise InputError("no usable MT-Bench judgments", path=files[0])
    df = pd.DataFrame(rows)
    df = df[list(PAIRWISE_COLUMNS) + list(EXTRA_COLUMNS)].reset_index(drop=True)
    df.attrs["n_error_dropped"] = n_error
    return df
