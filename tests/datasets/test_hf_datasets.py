"""HF adapter: never touches the network in tests; the clear-error path and a patched loader."""

from __future__ import annotations

import pandas as pd
import pytest

from judgeaudit.datasets import hf
from judgeaudit.errors import InputError


def test_offline_or_missing_package_is_a_clear_input_error(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InputError) as e:
        hf.load_hf("allenai/reward-bench")
    msg = str(e.value)
    assert "hf:allenai/reward-bench" in msg and ("datasets" in msg or "HF_HUB_OFFLINE" in msg)


def test_patched_loader_chosen_rejected_and_mapping():
    fake = pd.DataFrame({"prompt": ["p1", "p2"], "chosen": ["c1", "c2"], "rejected": ["r1", "r2"],
                         "subset": ["s", "s"]})
    df = hf.load_hf("org/set", _loader=lambda n, s, c: fake)
    assert len(df) == 2 and set(df.columns) >= {"response_a", "response_b", "label"}
    rated = pd.DataFrame({"response": ["a", "b"], "helpfulness": [3, 1], "prompt": ["p", "p"]})
    items = hf.load_hf("nvidia/HelpSteer2", mapping={"text": "response", "label": "helpfulness", "group": "prompt"},
                       _loader=lambda n, s, c: rated)
    assert items["label"].tolist() == ["3", "1"]
    with pytest.raises(InputError):
        hf.load_hf("nvidia/HelpSteer2", _loader=lambda n, s, c: rated)
