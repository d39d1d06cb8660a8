"""``judgeaudit.judges.replies`` is a package, one module per verdict form; every name the one module had
is still importable from the package, and it is the form module's own object (one definition)."""

from __future__ import annotations

import importlib

import pytest

FORMS = {"graded": ["read_graded"], "passfail": ["read_pass_fail"], "pairwise": ["read_pairwise"],
         "defects": ["read_defects", "defect_list"],
         "formats": ["FORMATS", "Reader", "read_json_path", "read_regex", "captured_value", "other_choice"],
         "common": ["ParseResult", "json_objects", "json_path", "check_json_path"]}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_reader_lives_in_its_form_module_and_is_importable_from_the_package(form):
    package = importlib.import_module("judgeaudit.judges.replies")
    module = importlib.import_module(f"judgeaudit.judges.replies.{form}")
    for name in FORMS[form]:
        assert getattr(package, name) is getattr(module, name), name
        assert name in package.__all__


def test_the_package_exports_exactly_the_readers():
    package = importlib.import_module("judgeaudit.judges.replies")
    assert sorted(package.__all__) == sorted(n for names in FORMS.values() for n in names)


def test_a_template_format_reads_through_the_form_modules():
    from judgeaudit.judges.replies import FORMATS
    from judgeaudit.judges.scale import OVERREACH_SCALE

    forms, read, _ = FORMATS["[[A>B]]"]
    assert forms == ("pairwise",)
    r = read("Verdict: [[B>>A]]", "pairwise", OVERREACH_SCALE, {})
    assert (r.ok, r.choice, r.strength) == (True, "B", 2)
    assert read("[[A>B]] or [[B>A]]", "pairwise", OVERREACH_SCALE, {}).ok is False
    assert FORMATS["[[rating]]"][1]("Rating: [[7]]", "graded", OVERREACH_SCALE, {}).score == 7.0
