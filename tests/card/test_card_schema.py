"""card.json as a typed, versioned record (``judgeaudit.card.schema.CardFile``): a card keeps every key a card
wrote before it was typed (``card_keys_v0.txt``: the key paths of the card of ``test_card._all_present``, written by
judgeaudit before ``CardFile``), reads back and writes as the same file, and a key renamed or missing in a card is
one error line naming the file and the field — at ``CardFile.read``, at ``card diff`` and at ``gate --card`` — not
an empty value on a diff or a gate."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from test_card import all_present_card

from judgeaudit.card.schema import SCHEMA_VERSION, CardFile
from judgeaudit.errors import InputError

KEYS_V0 = Path(__file__).with_name("card_keys_v0.txt")


def key_paths(x, at: str = "") -> set[str]:
    """Every key path of a JSON value (``a.b``; a list's items as ``a[]``)."""
    if isinstance(x, dict):
        return {p for k, v in x.items() for p in {f"{at}.{k}" if at else k} | key_paths(v, f"{at}.{k}" if at else k)}
    if isinstance(x, list):
        return {p for v in x for p in key_paths(v, f"{at}[]")}
    return set()


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The card folder of the fixture runs with every section measured (and a ledger)."""
    return all_present_card(tmp_path_factory.mktemp("card_schema"))


def test_a_card_keeps_every_key_a_card_wrote_before_it_was_typed(built):
    card = json.loads((built / "card.json").read_text(encoding="utf-8"))
    assert card["schema_version"] == SCHEMA_VERSION == 1
    assert key_paths(card) == set(KEYS_V0.read_text(encoding="utf-8").splitlines()) | {"schema_version"}


def test_a_card_reads_back_and_writes_as_the_same_file(built, tmp_path):
    text = (built / "card.json").read_text(encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # written in either mode without a serializer's warning
        card = CardFile.read(built)
        assert card.model_dump(mode="json", by_alias=True, exclude_unset=True) == json.loads(text)
    assert json.dumps(card.to_json(), indent=2, ensure_ascii=False) == text
    assert card.write(tmp_path / "again.json").read_text(encoding="utf-8") == text
    # typed: what the gate and card diff read
    v = card.sections.validity
    assert v.measured and (v.bootstrap.unit, v.bootstrap.n) == ("base_id", v.n.base_items)
    assert v.metrics["R"].value == json.loads(text)["sections"]["validity"]["metrics"]["R"]["value"]
    assert card.sections.calibrate is None and card.lead.findings()[0][0] == "validity"


def test_a_card_written_before_the_version_reads_as_version_0_and_writes_back_unchanged(built, tmp_path):
    old = json.loads((built / "card.json").read_text(encoding="utf-8"))
    del old["schema_version"]
    card = CardFile.of(old)
    assert card.schema_version == 0 and card.to_json() == old


def test_an_integer_stays_an_integer_and_a_nan_stays_a_nan(built):
    old = json.loads((built / "card.json").read_text(encoding="utf-8"))
    old["sections"]["loop"]["regulators"]["informed"] = {"net": 3, "ci": [1, float("nan")]}
    got = CardFile.of(old).to_json()["sections"]["loop"]["regulators"]["informed"]
    assert type(got["net"]) is int and type(got["ci"][0]) is int and got["ci"][1] != got["ci"][1]


@pytest.mark.parametrize("n", [float("inf"), -1, 2.5, "12", True])
def test_a_unit_count_that_is_not_a_whole_number_is_named(built, n):
    old = json.loads((built / "card.json").read_text(encoding="utf-8"))
    old["sections"]["validity"]["bootstrap"]["n"] = n
    with pytest.raises(InputError) as e:
        CardFile.of(old)
    assert e.value.field == "sections.validity.bootstrap.n" and "a unit count is a whole number" in str(e.value)


def _renamed(built: Path, tmp_path: Path, path: str, new: str) -> Path:
    card = json.loads((built / "card.json").read_text(encoding="utf-8"))
    *head, last = path.split(".")
    node = card
    for k in head:
        node = node[int(k)] if isinstance(node, list) else node[k]
    node[new] = node.pop(last)
    f = tmp_path / "renamed" / "card.json"
    f.parent.mkdir(exist_ok=True)
    f.write_text(json.dumps(card), encoding="utf-8")
    return f


@pytest.mark.parametrize("path, new", [
    ("sections.validity.metrics", "metric"),                        # a section's block renamed
    ("sections.validity.bootstrap.n", "n_units"),                   # what a gate's unit floor reads
    ("sections.world.arms", "rates"),
    ("sections.vp.rows.0.a_imp", "a_imp_value"),
    ("sections.loop.regulators.informed.net", "net_effect"),
    ("sections.cap.sets.judgebench.overall.value", "v"),
    ("sections.validity.source.path", "file"),                      # the run card diff re-reads
    ("generated_at", "generated"),                                  # an earlier spelling at the top
    ("sections.ledger", "ledgers"),                                 # a whole section
])
def test_a_renamed_key_is_one_error_line_naming_the_file_and_the_field(built, tmp_path, cli_main, path, new):
    f = _renamed(built, tmp_path, path, new)
    with pytest.raises(InputError) as e:
        CardFile.read(f)
    assert (e.value.path, e.value.field) == (str(f), path), str(e.value)
    assert "\n" not in str(e.value) and str(e.value).startswith(f"{f}: field '{path}': malformed card")
    # card diff and gate --card: the same one line, no traceback, nothing compared or judged
    policy = tmp_path / "policy.yaml"
    policy.write_text("bars:\n  - R >= 0.1\n")
    for argv, code in ((["card", "diff", built, f], 2), (["gate", policy, "--card", f], 3)):
        r = cli_main(*argv)
        lines = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip()]
        assert r.returncode == code and len(lines) == 1, r.stdout + r.stderr
        assert lines[0].startswith(f"error: {f}: field '{path}': malformed card"), lines[0]
