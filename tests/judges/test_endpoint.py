"""Where an api judge's requests go is part of the instrument: normalised into the call key, never a credential."""

from __future__ import annotations

import pytest

from judgeaudit.errors import InputError
from judgeaudit.judges import make_judge
from judgeaudit.judges.api import _redact
from judgeaudit.judges.base import normalise_endpoint
from judgeaudit.records import JudgeRequest

REQ = JudgeRequest(request_id="r", text="claim", evidence="evidence")


@pytest.mark.parametrize(("url", "expected"), [
    ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
    ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1"),
    ("HTTP://LocalHost:8000/v1//", "http://localhost:8000/v1"),
    ("https://api.example.com:443/v1", "https://api.example.com/v1"),
    ("http://example.com:80", "http://example.com"),
    ("https://user:s3cret@gw.example.com:8443/openai/V1?api-key=abc#frag", "https://gw.example.com:8443/openai/V1"),
    ("http://[::1]:8000/v1", "http://[::1]:8000/v1"),
    (" http://127.0.0.1:9/v1 ", "http://127.0.0.1:9/v1"),
])
def test_normalise_endpoint(url, expected):
    assert normalise_endpoint(url) == expected


@pytest.mark.parametrize("url", ["127.0.0.1:8000/v1", "ftp://host/v1", "http:///v1", "http://h:99999/v1", ""])
def test_an_endpoint_that_is_not_an_http_url_is_an_input_error(url):
    with pytest.raises(InputError, match="api_base must be an http"):
        normalise_endpoint(url)


def test_the_endpoint_is_in_the_key_and_the_verdict_and_a_missing_one_keeps_the_old_key(monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    a = make_judge("api:openai/m", api_base="http://127.0.0.1:8000/v1")
    b = make_judge("api:openai/m", api_base="http://127.0.0.1:8001/v1")
    same = make_judge("api:openai/m", api_base="http://u:pw@127.0.0.1:8000/v1/")
    none = make_judge("api:openai/m")
    assert a.key(REQ) != b.key(REQ) and a.key(REQ) == same.key(REQ) != none.key(REQ)
    # a judge with no api_base hashes exactly as before the endpoint was introduced (stores stay valid)
    # (the key the previous release computed for this request, so existing stores keep answering)
    assert none.key(REQ) == "ae06d2a60376d426fcf7d9a46327c368296c6c63aabf69bb68172c2e78a3daa9"
    assert a.make_verdict(REQ, meta={"x": 1}).meta == {"endpoint": "http://127.0.0.1:8000/v1", "x": 1}
    assert "endpoint" not in none.make_verdict(REQ).meta
    assert same.provider == "http://127.0.0.1:8000/v1"
    # a vote over the judge hashes the inner fingerprint, so it follows the endpoint too
    va = make_judge("vote:3:api:openai/m", api_base="http://127.0.0.1:8000/v1")
    vb = make_judge("vote:3:api:openai/m", api_base="http://127.0.0.1:8001/v1")
    assert va.key(REQ) != vb.key(REQ)


def test_redact_cuts_userinfo_and_query_strings():
    msg = "Connection error to http://user:pw@127.0.0.1:9/v1/chat/completions?api-key=k1 (refused)"
    assert _redact(msg) == "Connection error to http://127.0.0.1:9/v1/chat/completions (refused)"


def test_a_permanent_error_keeps_its_name_and_loses_its_credentials():
    from judgeaudit.judges.api import _without_credentials

    class NotFoundError(Exception):
        pass

    e = _without_credentials(NotFoundError("no model at http://u:pw@h:1/v1/chat/completions?key=k1"))
    assert f"{type(e).__name__}: {e}" == "NotFoundError: no model at http://h:1/v1/chat/completions"


def test_a_base_url_from_the_environment_is_the_endpoint(monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    default = make_judge("api:openai/m")
    monkeypatch.setenv("OPENAI_API_BASE", "http://127.0.0.1:8002/v1/")
    from_env = make_judge("api:openai/m")
    assert from_env.spec.endpoint == "http://127.0.0.1:8002/v1" and from_env.key(REQ) != default.key(REQ)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8003/v1")     # LiteLLM reads this one first
    assert make_judge("api:openai/m").spec.endpoint == "http://127.0.0.1:8003/v1"
    assert make_judge("api:openai/m", api_base="http://127.0.0.1:8000/v1").spec.endpoint == "http://127.0.0.1:8000/v1"
    assert make_judge("api:anthropic/m").spec.endpoint is None             # another provider's variable
    monkeypatch.setenv("OPENAI_BASE_URL", "localhost:8000")
    with pytest.raises(InputError, match="OPENAI_BASE_URL must be an http"):
        make_judge("api:openai/m")
