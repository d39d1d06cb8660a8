"""The annotation app: blinding, tokens, persistence, basis validation (construct-validity.txt App. C)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from annotate_fixtures import study_probes
from fastapi.testclient import TestClient

from judgeaudit.errors import InputError
from judgeaudit.probes.annotate import check_basis, export_study, init_study, normalise, split_spans
from judgeaudit.probes.annotate.app import create_app
from judgeaudit.probes.taxonomy import AXES, SLOTS


@pytest.fixture()
def study(tmp_path):
    db = tmp_path / "study.sqlite"
    tokens = init_study(db, study_probes(), 3, seed=11)
    return db, tokens, TestClient(create_app(db))


def h(token):
    return {"Authorization": f"Bearer {token}"}


def item_with(client, token, needle):
    for pos in range(1, 7):
        d = client.get(f"/api/items/{pos}", headers=h(token)).json()
        for side in ("a", "b"):
            if needle in d[side]:
                return pos, side.upper(), d
    raise AssertionError(needle)


def test_requests_without_valid_token_are_refused(study):
    db, tokens, c = study
    for method, path in [("GET", "/api/me"), ("GET", "/api/items/1"), ("GET", "/api/admin/progress"),
                         ("GET", "/api/admin/export")]:
        assert c.request(method, path).status_code == 401
        assert c.request(method, path, headers=h("not-a-token")).status_code == 401
    r = c.put("/api/items/1/answer", json={"answer": "neither", "same_facts": True})
    assert r.status_code == 401
    assert c.get("/api/me", headers={"Authorization": "Basic abc"}).status_code == 401


def test_annotator_token_refused_on_admin_routes(study):
    db, tokens, c = study
    for tok in tokens.annotator_tokens.values():
        assert c.get("/api/admin/progress", headers=h(tok)).status_code == 403
        assert c.get("/api/admin/export", headers=h(tok)).status_code == 403
    assert c.get("/api/admin/progress", headers=h(tokens.admin_token)).status_code == 200
    # the admin token is not an annotator link
    assert c.get("/api/me", headers=h(tokens.admin_token)).status_code == 401


def test_tokens_stored_only_as_hashes(study):
    db, tokens, c = study
    blob = db.read_bytes() + (db.with_name(db.name + "-wal").read_bytes() if db.with_name(db.name + "-wal").exists()
                              else b"")
    for tok in [tokens.admin_token, *tokens.annotator_tokens.values()]:
        assert tok.encode() not in blob
    con = sqlite3.connect(db)
    hashes = [r[0] for r in con.execute("SELECT token_sha256 FROM annotators")]
    assert all(len(x) == 64 for x in hashes)


def test_annotator_never_sees_other_labels_slot_axis_or_edit_side(study):
    db, tokens, c = study
    t1, t2 = tokens.annotator_tokens["a1"], tokens.annotator_tokens["a2"]
    secret_basis = "markedly lowered"
    pos, side, _ = item_with(c, t1, "markedly lowered")
    r = c.put(f"/api/items/{pos}/answer", headers=h(t1),
              json={"answer": side, "basis": secret_basis, "note": "only 9% once", "same_facts": True})
    assert r.status_code == 200, r.text

    bodies = []
    bodies.append(c.get("/").text)
    bodies.append(c.get("/static/app.js").text)
    bodies.append(c.get("/api/me", headers=h(t2)).text)
    for p in range(1, 7):
        r = c.get(f"/api/items/{p}", headers=h(t2))
        assert r.status_code == 200
        assert set(r.json()) == {"position", "total", "done", "next_position", "evidence", "a", "b", "answer"}
        assert r.json()["answer"] is None            # a1's label is not visible to a2
        bodies.append(r.text)
    r = c.put("/api/items/1/answer", headers=h(t2), json={"answer": "neither", "same_facts": True})
    assert set(r.json()) == {"saved", "position", "total", "done", "next_position"}
    bodies.append(r.text)
    assert c.get("/api/items/7", headers=h(t2)).status_code == 404
    text = "\n".join(bodies)
    forbidden = [s.name for s in SLOTS] + list(AXES) + ["edited", "original", "edited_side", "probe_id", "slot",
                                                        "axis", "arm", "b3__", "only 9% once"]
    for word in forbidden:
        assert word not in text, word
    # and a1 sees their own answer back, still without the unblinding
    d = c.get(f"/api/items/{pos}", headers=h(t1)).json()
    assert d["answer"] == {"answer": side, "basis": secret_basis, "note": "only 9% once", "same_facts": True}


def test_script_in_probe_text_is_inert(study):
    db, tokens, c = study
    page = c.get("/")
    assert "window.__pwned" not in page.text and page.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    pos, side, d = item_with(c, tokens.annotator_tokens["a1"], "<script>")
    r = c.get(f"/api/items/{pos}", headers=h(tokens.annotator_tokens["a1"]))
    assert r.headers["content-type"] == "application/json"
    # the page only ever writes server text with textContent
    js = c.get("/static/app.js").text
    assert "innerHTML" not in js and "insertAdjacentHTML" not in js and "document.write" not in js


def test_answers_persist_resume_and_export_unblinds_for_admin(study):
    db, tokens, c = study
    t1 = tokens.annotator_tokens["a1"]
    assert c.get("/api/me", headers=h(t1)).json() == {"total": 6, "done": 0, "next_position": 1}
    for p in (1, 2, 3):
        r = c.put(f"/api/items/{p}/answer", headers=h(t1), json={"answer": "cannot_tell", "same_facts": p != 2})
        assert r.status_code == 200
    assert r.json()["next_position"] == 4
    # a new app on the same database (a restarted server) resumes at the fourth pair
    c2 = TestClient(create_app(db))
    assert c2.get("/api/me", headers=h(t1)).json() == {"total": 6, "done": 3, "next_position": 4}
    # revising keeps one current answer, with the log keeping both
    pos, side, _ = item_with(c2, t1, "all river basins")
    c2.put(f"/api/items/{pos}/answer", headers=h(t1), json={"answer": side, "basis": "all river basins",
                                                              "same_facts": True})
    c2.put(f"/api/items/{pos}/answer", headers=h(t1), json={"answer": side, "basis": "In all river basins",
                                                              "same_facts": True})
    exp = c2.get("/api/admin/export", headers=h(tokens.admin_token)).json()["answers"]
    row = next(r for r in exp if r["probe_id"] == "b1__population_widening")
    assert row["direction"] == "edited" and row["annotator_id"] == "a1" and row["basis"] == "In all river basins"
    assert row["revision"] == (2 if pos > 3 else 3)
    prog = c2.get("/api/admin/progress", headers=h(tokens.admin_token)).json()["annotators"]
    assert [(p["annotator_id"], p["done"]) for p in prog] == [("a1", 4 if pos > 3 else 3), ("a2", 0), ("a3", 0)]
    assert export_study(db)["answers"] == exp


def test_basis_validation_through_the_api(study):
    db, tokens, c = study
    t = tokens.annotator_tokens["a3"]
    pos, side, d = item_with(c, t, "markedly lowered")
    other = "B" if side == "A" else "A"
    body = {"answer": side, "same_facts": True}
    # ASCII quotes and hyphens typed for curly quotes, en dash and non-breaking hyphen; two spans
    ok = 'The "new" method markedly lowered ... 2019-2021 in a non-tidal basin, substantially so'
    assert c.put(f"/api/items/{pos}/answer", headers=h(t), json={**body, "basis": ok}).status_code == 200
    assert c.put(f"/api/items/{pos}/answer", headers=h(t),
                 json={**body, "basis": "'markedly'\n\u201csubstantially so\u201d"}).status_code == 200
    bad = c.put(f"/api/items/{pos}/answer", headers=h(t), json={**body, "basis": "dramatically lowered"})
    assert bad.status_code == 422 and bad.json()["detail"]["field"] == "basis"
    assert "dramatically lowered" in bad.json()["detail"]["message"]
    # a span that occurs only in the other sentence does not count for this side
    assert c.put(f"/api/items/{pos}/answer", headers=h(t),
                 json={"answer": other, "basis": "markedly", "same_facts": True}).status_code == 422
    assert c.put(f"/api/items/{pos}/answer", headers=h(t), json={**body, "basis": ""}).status_code == 422
    assert c.put(f"/api/items/{pos}/answer", headers=h(t), json={**body, "basis": "m"}).status_code == 422
    # neither / cannot tell need no span; same_facts is mandatory; unknown answers are refused
    assert c.put(f"/api/items/{pos}/answer", headers=h(t), json={"answer": "neither", "same_facts": False}
                 ).status_code == 200
    assert c.put(f"/api/items/{pos}/answer", headers=h(t), json={"answer": "neither"}).status_code == 422
    assert c.put(f"/api/items/{pos}/answer", headers=h(t), json={"answer": "edited", "same_facts": True}
                 ).status_code == 422


def test_basis_normalisation_unit():
    assert normalise("non\u2011tidal \u201cnew\u201d \u2018x\u2019 2019\u20132021\u00a0a\u2014b") == \
        "non-tidal \"new\" 'x' 2019-2021 a-b"
    assert split_spans('"one span" ... two\nthree … four [...] five') == ["one span", "two", "three", "four", "five"]
    assert check_basis("lowered ... 9%", "It lowered error by 9%.").ok
    assert not check_basis("raised", "It lowered error by 9%.").ok


def test_init_refuses_existing_db(tmp_path, study):
    db, tokens, c = study
    with pytest.raises(InputError, match="already exists"):
        init_study(db, study_probes(), 3)
    json.dumps(export_study(db))


# --- request limits: authenticate before reading a body, cap bodies, 4xx for odd input (issue 10, item 8) ---


def _asgi(app, method, path, token=None, chunks=(), content_length=None):
    """Drive the ASGI app directly; returns (status, body bytes the app pulled from the client)."""
    import asyncio

    pending = list(chunks)
    pulled = []

    async def receive():
        if pending:
            c = pending.pop(0)
            pulled.append(len(c))
            return {"type": "http.request", "body": c, "more_body": bool(pending)}
        return {"type": "http.disconnect"}

    sent = []

    async def send(msg):
        sent.append(msg)

    headers = [(b"content-type", b"application/json")]
    if token:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    if content_length is not None:
        headers.append((b"content-length", str(content_length).encode()))
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "", "headers": headers,
             "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8765)}
    asyncio.run(app(scope, receive, send))
    return next(m["status"] for m in sent if m["type"] == "http.response.start"), sum(pulled)


def test_unknown_token_refused_before_the_body_is_read(study):
    from judgeaudit.probes.annotate.app import create_app

    db, tokens, c = study
    chunks = [b" " * 32768] * 8
    for tok in (None, "not-a-token"):
        status, pulled = _asgi(create_app(db), "PUT", "/api/items/1/answer", tok, chunks, 8 * 32768)
        assert (status, pulled) == (401, 0)
        status, pulled = _asgi(create_app(db), "PUT", "/api/items/1/answer", tok, chunks)  # no Content-Length
        assert (status, pulled) == (401, 0)


def test_bodies_over_64_kib_are_refused_413(study):
    from judgeaudit.probes.annotate.app import MAX_BODY

    db, tokens, c = study
    t = tokens.annotator_tokens["a1"]
    assert MAX_BODY == 64 * 1024
    answer = b'{"answer": "neither", "same_facts": true}'
    # by Content-Length: refused before reading
    status, pulled = _asgi(create_app(db), "PUT", "/api/items/1/answer", t, [answer + b" " * MAX_BODY],
                           len(answer) + MAX_BODY)
    assert (status, pulled) == (413, 0)
    # streamed without a length: reading stops at the first chunk past the cap
    status, pulled = _asgi(create_app(db), "PUT", "/api/items/1/answer", t, [answer] + [b" " * 16384] * 64)
    assert (status, pulled) == (413, len(answer) + 4 * 16384)   # the 4th chunk crosses 64 KiB
    # through the test client
    r = c.put("/api/items/1/answer", headers={**h(t), "content-type": "application/json"},
              content=answer + b" " * MAX_BODY)
    assert r.status_code == 413
    # a body just under the cap is read and saved
    r = c.put("/api/items/1/answer", headers={**h(t), "content-type": "application/json"},
              content=answer + b" " * (MAX_BODY - len(answer)))
    assert r.status_code == 200 and r.json()["saved"] is True


def test_oversized_position_and_lone_surrogate_are_4xx(study):
    db, tokens, c = study
    t = tokens.annotator_tokens["a1"]
    c = TestClient(create_app(db), raise_server_exceptions=False)
    huge = 10**30
    assert c.get(f"/api/items/{huge}", headers=h(t)).status_code == 422
    assert c.put(f"/api/items/{huge}/answer", headers=h(t), json={"answer": "neither", "same_facts": True}
                 ).status_code == 422
    assert c.get("/api/items/0", headers=h(t)).status_code == 422
    for field in ("note", "basis"):
        body = ('{"answer": "neither", "same_facts": true, "%s": "x\\ud800y"}' % field).encode()
        r = c.put("/api/items/1/answer", headers={**h(t), "content-type": "application/json"}, content=body)
        assert r.status_code == 422, r.text
        assert r.json()["detail"][0]["loc"][-1] == field
    assert export_study(db)["answers"] == []


def test_serve_binds_to_loopback_by_default(study, monkeypatch):
    import uvicorn
    from typer.testing import CliRunner

    from judgeaudit.cli import app

    db, tokens, c = study
    seen = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, **kw: seen.update(host=host, port=port))
    r = CliRunner().invoke(app, ["probes", "annotate", "serve", "--db", str(db)])
    assert r.exit_code == 0, r.output
    assert seen == {"host": "127.0.0.1", "port": 8765}
