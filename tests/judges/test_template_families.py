"""The world forms reach ``judges`` through the template-family registry (``judges.forms``) that
``world.forms`` fills (``tests/test_layers.py`` checks that ``judges`` never imports ``world``)."""

from __future__ import annotations


def test_the_world_family_is_registered_by_the_world_package():
    # the registry loads its plug-in (judgeaudit.world.forms) itself on the first lookup
    from judgeaudit.judges.forms import family
    from judgeaudit.records import JudgeRequest
    from judgeaudit.world import templates

    fam = family("world")
    r = JudgeRequest(request_id="w", form="label", text="The capital is Lyon.", evidence="Paris is the capital.",
                     meta={"template": "world"})
    from judgeaudit.judges import elicit

    assert elicit.render(r) == templates.render(r) == fam.render(r)
    assert elicit.parse_request(r, '{"defective": true}').label is True
    assert fam.reply_keys["label"] == "defective"
