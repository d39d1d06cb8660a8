"""``runinfo.RunStamp``: the stamp every result carries (run id, time, inputs, answer times) read through one type, the
same for every analysis; a stamp key not as ``write_result`` writes it is one error naming the file and field."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from judgeaudit.errors import InputError
from judgeaudit.runinfo import RunStamp, changed_inputs, read_stamped, write_result


def _result(tmp_path, payload=None, **kw):
    probes = tmp_path / "probes.jsonl"
    probes.write_text('{"x": 1}\n')
    d = write_result(tmp_path / "result.json", payload or {"judges": {}, "s_floor": 0.9},
                     inputs={"probes": probes}, **kw)
    return d, probes


def test_the_stamp_of_a_written_result_is_what_write_result_wrote(tmp_path):
    d, probes = _result(tmp_path)
    s = RunStamp.read(tmp_path)   # a run folder reads its result.json
    assert (s.run_id, s.created_at) == (d["run_id"], d["created_at"])
    assert s.when() == datetime.fromisoformat(d["created_at"]) and s.when().tzinfo is not None
    assert s.inputs.files["probes"].path == str(probes.resolve())
    assert s.inputs.model_dump(mode="json", exclude_unset=True) == d["inputs"]   # what the card copies, unchanged
    assert s.answers is None                                                     # no verdicts: no answer record
    assert changed_inputs(s) == [] == changed_inputs(d)
    probes.write_text('{"x": 2}\n')
    assert changed_inputs(s) == [f"its probes input {probes.resolve()} changed after the run (SHA-256 differs from "
                                 "the one recorded)"]


def test_the_answer_record_is_read_typed():
    from judgeaudit.records import Verdict

    now = datetime.now(UTC).isoformat()
    one = dict(judge_id="j", raw="5", score=5.0, parse_ok=True, timestamp=now)
    v = [Verdict(call_key="k1", request_id="a", **one), Verdict(call_key="k2", request_id="b", provider="replay", **one)]
    from judgeaudit.runinfo import answer_record

    s = RunStamp.of({"run_id": "r", "created_at": now, "answers": answer_record(v)})
    assert (s.answers.calls, s.answers.replayed, s.answers.untimed, s.answers.earliest) == (2, 1, 0, now)


def test_a_stamp_key_not_as_written_is_one_error_naming_the_file_and_field(tmp_path):
    d, _ = _result(tmp_path)
    bad = tmp_path / "bad.json"
    for broken, field in (({**d, "run_id": 7}, "run_id"),
                          ({**d, "inputs": {**d["inputs"], "files": {"probes": {"sha": "x"}}}},
                           "inputs.files.probes.path"),
                          ({**d, "answers": {"calls": "many"}}, "answers.calls")):
        bad.write_text(json.dumps(broken))
        with pytest.raises(InputError) as e:
            RunStamp.read(bad)
        assert e.value.path == str(bad) and e.value.field == field, str(e.value)


def test_read_stamped_refuses_a_result_that_records_no_run(tmp_path):
    d, _ = _result(tmp_path)
    stamp, data = read_stamped(tmp_path / "result.json")
    assert stamp.run_id == d["run_id"] and data == d
    f = tmp_path / "old.json"
    for broken, field in (({k: v for k, v in d.items() if k != "run_id"}, "run_id"),
                          ({**d, "created_at": "2026-01-01T00:00:00"}, "created_at"),
                          ({**d, "created_at": "yesterday"}, "created_at")):
        f.write_text(json.dumps(broken))
        with pytest.raises(InputError) as e:
            read_stamped(f)
        assert e.value.field == field and e.value.path == str(f)


def test_a_result_of_another_answers_record_reads_as_recording_no_answer_times():
    # a HaluEval check writes its own ``answers`` (per-answer counts): no answer time is read from it
    s = RunStamp.of({"run_id": "r", "created_at": "2026-01-01T00:00:00+00:00",
                     "answers": {"right": {"total": 2, "passed": 2}, "hallucinated": {"total": 2, "passed": 0}}})
    assert (s.answers.calls, s.answers.replayed, s.answers.untimed, s.answers.earliest) == (None, None, None, None)
