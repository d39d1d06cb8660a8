"""Every data folder the package ships has a PROVENANCE.json naming a licence that permits shipping it.

A data folder is each folder under ``judgeaudit/data/`` and every other package folder holding files that are
not Python (data sets, prompt texts, probe items), except the project's own page code listed in ``CODE_ASSETS``
(covered by the package's licence). A folder is covered by a PROVENANCE.json in it or in a parent folder inside
the package. The licence is an SPDX expression (``license`` field; also each ``files[]`` entry's ``license`` when
given) or an explicit licence statement naming a licence; a statement that the terms are unknown is refused.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from packaging.licenses import InvalidLicenseExpression, canonicalize_license_expression

import judgeaudit

PACKAGE = Path(judgeaudit.__file__).resolve().parent

#: Folders of the project's own page code (HTML, JavaScript, CSS of the report card and the annotation app).
CODE_ASSETS = {"card/templates", "probes/annotate/static"}

#: Licence names an explicit statement may use (SPDX ids are read by ``packaging.licenses``).
_NAMED = re.compile(r"\b(MIT License|Apache License,? (Version )?2\.0|Apache 2\.0|CC BY(-SA)? 4\.0|"
                    r"BSD [23]-Clause|GNU General Public License)\b", re.IGNORECASE)
_NOT_A_LICENCE = re.compile(r"unlicensed|terms unknown|no licen[cs]e (file|statement)|unknown licen", re.IGNORECASE)


def names_a_licence(value: object) -> bool:
    """Whether a PROVENANCE ``license`` value is an SPDX expression or a statement naming a licence."""
    if not isinstance(value, str) or not value.strip():
        return False
    try:
        canonicalize_license_expression(value)
        return True
    except InvalidLicenseExpression:
        pass
    return bool(_NAMED.search(value)) and not _NOT_A_LICENCE.search(value)


def data_folders(package: Path = PACKAGE) -> list[Path]:
    """Each folder under ``data/``, and every other folder of ``package`` holding a file that is not Python
    (outside ``CODE_ASSETS``)."""
    data = package / "data"
    folders = {p for p in data.iterdir() if p.is_dir()} if data.is_dir() else set()
    for f in package.rglob("*"):
        if not f.is_file() or f.suffix in (".py", ".pyc") or "__pycache__" in f.parts:
            continue
        rel = f.parent.relative_to(package)
        if rel.parts[:1] == ("data",):
            if len(rel.parts) > 1:
                folders.add(data / rel.parts[1])
        elif not any(rel.as_posix() == c or rel.as_posix().startswith(c + "/") for c in CODE_ASSETS):
            folders.add(f.parent)
    return sorted(folders)


def provenance_of(folder: Path, package: Path = PACKAGE) -> Path | None:
    """The PROVENANCE.json covering ``folder``: in it, else in its nearest parent inside the package."""
    for q in (folder, *folder.parents):
        if (q / "PROVENANCE.json").is_file():
            return q / "PROVENANCE.json"
        if q == package:
            return None
    return None


def test_the_check_refuses_unknown_terms_and_reads_spdx_and_statements():
    assert names_a_licence("Apache-2.0") and names_a_licence("Apache-2.0 AND MIT")
    assert names_a_licence('MIT License (LICENSE: "Copyright (c) 2023 Princeton Natural Language Processing")')
    assert not names_a_licence("No LICENSE file and no license statement in README.md in either snapshot. Treat as "
                               "unlicensed / terms unknown.")
    assert not names_a_licence("") and not names_a_licence(None) and not names_a_licence("see the website")


def test_the_walk_finds_every_data_folder_and_a_folder_without_provenance_fails(tmp_path):
    found = {f.relative_to(PACKAGE).as_posix() for f in data_folders()}
    assert {"data/halueval", "data/ifeval", "data/llmbar", "data/judgebench_fixture", "probes/data",
            "judges/templates"} <= found
    assert not any(f.startswith(tuple(CODE_ASSETS)) for f in found)
    # a package copy with one data folder lacking PROVENANCE.json, and a prompt folder with one: the check names
    # exactly the first
    import shutil

    copy = tmp_path / "judgeaudit"
    shutil.copytree(PACKAGE / "data" / "halueval", copy / "data" / "halueval")
    (copy / "data" / "other" / "deep").mkdir(parents=True)
    (copy / "data" / "other" / "deep" / "items.jsonl").write_text("{}\n")
    (copy / "prompts").mkdir()
    (copy / "prompts" / "p.yaml").write_text("a: 1\n")
    (copy / "prompts" / "PROVENANCE.json").write_text('{"license": "Apache-2.0"}')
    missing = [f for f in data_folders(copy) if provenance_of(f, copy) is None]
    assert [m.relative_to(copy).as_posix() for m in missing] == ["data/other"]
    assert {f.relative_to(copy).as_posix() for f in data_folders(copy)} == {"data/halueval", "data/other", "prompts"}


@pytest.mark.parametrize("folder", data_folders(), ids=lambda f: f.relative_to(PACKAGE).as_posix())
def test_data_folder_has_provenance_naming_a_licence(folder):
    prov = provenance_of(folder)
    assert prov is not None, f"{folder.relative_to(PACKAGE)} ships data without a PROVENANCE.json"
    meta = json.loads(prov.read_text(encoding="utf-8"))
    assert names_a_licence(meta.get("license")), f"{prov.relative_to(PACKAGE)}: no licence named ({meta.get('license')!r})"
    for entry in meta.get("files", []) if isinstance(meta.get("files"), list) else []:
        if isinstance(entry, dict) and "license" in entry:
            assert names_a_licence(entry["license"]), f"{prov.relative_to(PACKAGE)}: {entry.get('path')}"


def test_judgebench_itself_is_not_shipped():
    """JudgeBench has no licence: the package carries judgeaudit's own fixture in its format, never its files."""
    assert not (PACKAGE / "data" / "judgebench").exists()
    meta = json.loads((PACKAGE / "data" / "judgebench_fixture" / "PROVENANCE.json").read_text(encoding="utf-8"))
    assert meta["license"] == "Apache-2.0"
