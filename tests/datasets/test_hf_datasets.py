"""HF adapter: a dataset saved to disk or present in the local Hugging Face cache, never the hub.

Every test builds its own tiny dataset; a guard fails any test that opens a network connection.
"""

from __future__ import annotations

import json
import socket

import pandas as pd
import pytest

from judgeaudit.datasets import hf
from judgeaudit.datasets.registry import load_set
from judgeaudit.errors import InputError

datasets = pytest.importorskip("datasets", reason="the 'datasets' extra is not installed")

ROWS = {"prompt": ["p1", "p1", "p2"], "chosen": ["good one", "fine", "right"],
        "rejected": ["bad", "worse one", "wrong"], "subset": ["s", "s", "t"]}


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """The adapter must not reach the hub even where the environment allows it."""
    hub_constants = datasets.config.constants      # huggingface_hub.constants

    attempts: list[str] = []

    def refuse(*a, **k):
        # recorded as well as raised: a library may swallow the error and fall back to its cache
        attempts.append(repr(a[1:2] or a[:1]))
        raise OSError("network access refused by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
    yield
    assert attempts == [], f"network access attempted: {attempts}"


def _expect_pairs(df: pd.DataFrame) -> None:
    assert len(df) == 3
    # chosen/rejected → paired rows whose preferred side is the chosen text
    pref = [a if lab == "A" else b for a, b, lab in zip(df["response_a"], df["response_b"], df["label"], strict=True)]
    assert pref == ROWS["chosen"]
    assert set(df["label"]) <= {"A", "B"}


def test_saved_dataset_loads_from_disk(tmp_path):
    datasets.Dataset.from_dict(ROWS).save_to_disk(str(tmp_path / "tiny"))
    _expect_pairs(hf.load_hf(str(tmp_path / "tiny")))
    # through the registry, as a spec names it
    _expect_pairs(load_set(f"hf:{tmp_path / 'tiny'}"))


def test_saved_dataset_dict_picks_the_split(tmp_path):
    half = {k: v[:2] for k, v in ROWS.items()}
    datasets.DatasetDict({"train": datasets.Dataset.from_dict(ROWS),
                          "test": datasets.Dataset.from_dict(half)}).save_to_disk(str(tmp_path / "dd"))
    assert len(hf.load_hf(str(tmp_path / "dd"), split="test")) == 2
    _expect_pairs(hf.load_hf(str(tmp_path / "dd")))
    with pytest.raises(InputError, match="no split 'dev'.*train, test|no split 'dev'.*test, train"):
        hf.load_hf(str(tmp_path / "dd"), split="dev")


def test_item_layout_with_mapping_from_disk(tmp_path):
    datasets.Dataset.from_dict({"response": ["a", "b"], "helpfulness": [3, 1], "prompt": ["p", "p"]}) \
        .save_to_disk(str(tmp_path / "items"))
    items = hf.load_hf(str(tmp_path / "items"), mapping={"text": "response", "label": "helpfulness",
                                                          "group": "prompt"})
    assert items["text"].tolist() == ["a", "b"] and items["label"].tolist() == ["3", "1"]


def _cache_hub_dataset(cache, name: str, rows: dict) -> None:
    """Lay ``rows`` out as the datasets cache holds a hub dataset ``name`` prepared once online:
    ``<cache>/<name>/<config>/<version>/<hash>/`` with ``dataset_info.json`` and the Arrow split."""
    from datasets.packaged_modules.parquet.parquet import Parquet

    src = cache.parent / f"{name}.parquet"
    datasets.Dataset.from_dict(rows).to_parquet(str(src))
    Parquet(cache_dir=str(cache), data_files={"train": str(src)}, dataset_name=name, config_name="default",
            hash="0123abcd").download_and_prepare()
    (cfg,) = (cache / name).iterdir()          # default-<data-files hash> → default, as for a hub download
    cfg.rename(cfg.parent / "default")
    info = next((cache / name).rglob("dataset_info.json"))
    assert json.loads(info.read_text())["config_name"] == "default"


def test_hub_id_present_in_the_local_cache_loads_offline(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    _cache_hub_dataset(cache, "judgeaudit-tiny", ROWS)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(cache))
    _expect_pairs(hf.load_hf("judgeaudit-tiny"))
    # the adapter's offline switch is scoped to the call
    assert datasets.config.HF_HUB_OFFLINE is False


def test_neither_on_disk_nor_cached_is_a_clear_input_error(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(InputError) as e:
        hf.load_hf("allenai/reward-bench")
    msg = str(e.value)
    assert "hf:allenai/reward-bench is neither a folder saved with save_to_disk nor in the local" in msg
    assert "never downloads" in msg and str(tmp_path / "empty-cache") in msg
    # a folder that is not a saved dataset
    (tmp_path / "junk").mkdir()
    with pytest.raises(InputError, match="not a dataset saved with save_to_disk"):
        hf.load_hf(str(tmp_path / "junk"))


def test_missing_package_says_how_to_install(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_datasets(name, *a, **k):
        if name == "datasets":
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_datasets)
    with pytest.raises(InputError, match=r"judgeaudit\[datasets\]"):
        hf.load_hf("org/set")


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
