from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

ITEMS = [  # key, instruction ids, initial response
    (1, ["punctuation:no_comma"], "a, b, c"),
    (2, ["change_case:english_lowercase", "punctuation:no_comma"], "Hello, World"),
    (3, ["change_case:english_capital"], "THIS IS A LONGER ANSWER WRITTEN IN ENGLISH FOR THE READER."),
    (4, ["punctuation:no_comma"], "fine"),
]


def write_ifeval_dir(d: Path) -> Path:
    """Write the four-prompt IFEval folder of ``ITEMS`` at ``d`` (5 constraints, 3 failing in the shipped
    responses)."""
    d.mkdir()
    with (d / "input_data.jsonl").open("w") as fh:
        for key, ids, _ in ITEMS:
            fh.write(json.dumps({"key": key, "prompt": f"Prompt {key}.", "instruction_id_list": ids,
                                 "kwargs": [{} for _ in ids]}) + "\n")
    with (d / "input_response_data_test.jsonl").open("w") as fh:
        for key, _, resp in ITEMS:
            fh.write(json.dumps({"prompt": f"Prompt {key}.", "response": resp}) + "\n")
    return d


@pytest.fixture
def ifeval_dir(tmp_path):
    """A four-prompt IFEval folder (5 constraints, 3 failing in the shipped responses)."""
    return write_ifeval_dir(tmp_path / "ifeval")
