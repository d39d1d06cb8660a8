"""Spec strings ``NAME?k=v&…``: one reader of their options (``judgeaudit.specs``) behind every spec that takes
options — judge specs of every backend, replay specs, NLI specs, data-set specs — so that one option string reads
the same everywhere, and a malformed one is the same one-line error everywhere."""

from __future__ import annotations

import json

import pytest

from judgeaudit import specs
from judgeaudit.datasets import registry
from judgeaudit.errors import InputError
from judgeaudit.families import split_spec_family
from judgeaudit.judges import make_judge
from judgeaudit.judges.api import _split_transport
from judgeaudit.judges.base import _split_template
from judgeaudit.judges.replay import parse_spec as replay_spec
from judgeaudit.structural.judge import parse_structural

#: (query, the options it holds)
TABLE = [
    ("a=1&b=2", {"a": "1", "b": "2"}),
    ("scale=1,10&higher=worse", {"scale": "1,10", "higher": "worse"}),
    ("family=alibaba+nvidia", {"family": "alibaba+nvidia"}),          # + joins vendors: never a space
    ("name=a%26b&col=x%3Dy", {"name": "a&b", "col": "x=y"}),          # percent escapes are decoded
    ("text=my column", {"text": "my column"}),
    ("a=1&&b=2&", {"a": "1", "b": "2"}),                               # empty pairs are skipped
    ("api_base=http://127.0.0.1:8/v1?x=1", {"api_base": "http://127.0.0.1:8/v1?x=1"}),   # the first ? splits
    ("", {}),
]


@pytest.mark.parametrize(("query", "expected"), TABLE)
def test_every_site_reads_the_same_options(query, expected):
    spec = f"path/to/file.jsonl?{query}" if query else "path/to/file.jsonl"
    assert specs.split(spec) == ("path/to/file.jsonl", expected)
    assert replay_spec(spec) == ("path/to/file.jsonl", expected)
    assert registry.parse_spec(f"jsonl:{spec}") == ("jsonl", "path/to/file.jsonl", expected)
    # the sites that take one option off a judge spec keep the others as they read
    for take, key in ((_split_template, "template"), (_split_transport, "transport")):
        rest, value = take(f"{spec}&{key}=T" if query else f"{spec}?{key}=T")
        assert value == "T"
        assert specs.split(rest) == ("path/to/file.jsonl", expected)
        assert take(spec) == (spec, None)


def test_join_reads_back_unchanged():
    opts = {"name": "a&b c+d", "k=": "50%", "path": "/x/y?z"}
    assert specs.split(specs.join("n", opts)) == ("n", opts)
    assert specs.join("n", {}) == "n"
    assert specs.pop("n?a=1&b=2", "a") == ("n?b=2", "1")


def test_a_plus_in_a_family_is_read_alike_by_every_judge_backend():
    family = "alibaba+nvidia"
    assert split_spec_family(f"m?family={family}") == ("m", family)
    for spec in (f"api:openai/my-ft?family={family}", f"hf:./models/acme-7b?family={family}",
                 f"python:pyjudge_callables:grade?family={family}"):
        assert make_judge(spec).spec.family == family, spec


def test_structural_options_are_read_by_the_one_rule():
    _, params, opts = parse_structural("lexical?top_k=3&tau_s=0.7&cache=a%26b.sqlite", {})
    assert (params.top_k, params.tau_s, opts["cache"]) == (3, 0.7, "a&b.sqlite")


#: (query, the tail of the one error line)
MALFORMED = [
    ("family", "option 'family' has no value (write family=VALUE)"),
    ("family=", "option 'family' is blank (write family=VALUE, or leave the option out)"),
    ("family=openai&family=google", "option 'family' is given twice"),
    ("=openai", "an option has no name ('=openai'; write key=value)"),
]


@pytest.fixture
def replay_file(tmp_path):
    p = tmp_path / "v.jsonl"
    p.write_text(json.dumps({"request_id": "a", "score": 3}) + "\n")
    return p


@pytest.mark.parametrize(("query", "tail"), MALFORMED)
def test_a_malformed_option_is_one_line_naming_it_at_every_site(query, tail, replay_file):
    sites = {
        "api": lambda: make_judge(f"api:openai/gpt-4o-mini?{query}"),
        "api structured": lambda: make_judge(f"api:openai/gpt-4o-mini?structured=tools&{query}"),
        "hf": lambda: make_judge(f"hf:./models/acme-7b?{query}"),
        "python": lambda: make_judge(f"python:pyjudge_callables:grade?{query}"),
        "replay": lambda: make_judge(f"replay:{replay_file}?{query}"),
        "structural": lambda: make_judge(f"structural:lexical?{query}"),
        "template": lambda: make_judge(f"reference:constant?template=mt-bench-single&{query}"),
        "set": lambda: registry.load_set(f"jsonl:{replay_file}?{query}"),
    }
    for site, build in sites.items():
        with pytest.raises(InputError) as e:
            build()
        text = str(e.value)
        assert text.endswith(tail) and "\n" not in text, (site, text)
        assert query in text, (site, text)   # the line names the spec it read
