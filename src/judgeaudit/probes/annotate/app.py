"""The annotation web app (construct-validity.txt §4.2 Protocol 1 step 3, Appendix C).

One pair at a time, blinded: an annotator's API responses carry the position in their own
stream, the evidence, sentences A and B, and their own saved answer — never a probe id, slot,
axis, arm, which side is the edit, nor anyone else's labels. Every answer is committed to SQLite
(WAL) the moment it is submitted; the page resumes at the first unanswered position.

Routes (all API calls take ``Authorization: Bearer <token>``):

* ``GET /`` — the page (static HTML/JS/CSS; the token travels in the URL fragment ``#t=...``,
  which browsers never send to the server, so it is not in access logs).
* ``GET /api/me`` — progress: ``{total, done, next_position}``.
* ``GET /api/items/{position}`` — the pair at a position of the caller's own stream.
* ``PUT /api/items/{position}/answer`` — save ``{answer, basis, note, same_facts}``.
* ``GET /api/admin/progress``, ``GET /api/admin/export`` — admin token only.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator

from judgeaudit.probes.annotate.basis import check_basis
from judgeaudit.probes.annotate.db import StudyDB

_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
_HEADERS = {"Content-Security-Policy": _CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
            "X-Frame-Options": "DENY", "Cache-Control": "no-store"}
_STATIC = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}
MAX_BODY = 64 * 1024
"""Largest request body accepted (bytes); an answer is a few KiB at most (basis and note ≤ 4000 chars)."""
MAX_POSITION = 2**31 - 1
"""Largest stream position a request may name (a larger number is a 422, not a database overflow)."""


def _token(authorization: str) -> str | None:
    """The bearer token of an Authorization header, or None."""
    scheme, _, token = authorization.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _plain_text(v: str) -> str:
    """Refuse text that cannot be stored as UTF-8 (a lone surrogate from a ``\\ud800`` JSON escape)."""
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text holds a lone surrogate (not valid Unicode)") from None
    return v


class _Guard:
    """ASGI middleware in front of ``/api/``: a request without a known token is refused before its body
    is read, and a body over ``MAX_BODY`` is refused with 413 (by Content-Length, and while streaming)."""

    def __init__(self, app: Any, db: StudyDB):
        self.app, self.db = app, db

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/api/"):
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        token = _token(headers.get("authorization", ""))
        if token is None or (self.db.annotator_for(token) is None and not self.db.is_admin(token)):
            return await self._refuse(scope, receive, send, 401, "missing token" if token is None else "unknown token",
                                      {"WWW-Authenticate": "Bearer"})
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            return await self._refuse(scope, receive, send, 413 if length.isdigit() else 400,
                                      f"request body over {MAX_BODY} bytes" if length.isdigit() else "bad length")
        if scope["method"] not in ("POST", "PUT", "PATCH"):
            return await self.app(scope, receive, send)
        chunks, total = [], 0
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return None
            chunks.append(msg.get("body", b""))
            total += len(chunks[-1])
            if total > MAX_BODY:
                return await self._refuse(scope, receive, send, 413, f"request body over {MAX_BODY} bytes")
            if not msg.get("more_body", False):
                break
        body, replayed = b"".join(chunks), False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)

    @staticmethod
    async def _refuse(scope: dict, receive: Any, send: Any, status: int, detail: str,
                      headers: dict[str, str] | None = None) -> None:
        await JSONResponse({"detail": detail}, status_code=status, headers={**_HEADERS, **(headers or {})})(
            scope, receive, send)


class AnswerIn(BaseModel):
    """One annotator's judgement of one pair (Appendix C: direction, basis, same_facts)."""

    model_config = ConfigDict(extra="forbid")

    answer: Literal["A", "B", "neither", "cannot_tell"]
    basis: str = Field(default="", max_length=4000)
    note: str = Field(default="", max_length=4000)
    same_facts: bool

    @field_validator("basis", "note")
    @classmethod
    def _text(cls, v: str) -> str:
        return _plain_text(v)


Position = Annotated[int, PathParam(ge=1, le=MAX_POSITION)]


def _static(name: str) -> bytes:
    return resources.files("judgeaudit.probes.annotate").joinpath("static", name).read_bytes()


def create_app(db_path: str | Path) -> FastAPI:
    """The FastAPI application serving one study database."""
    db = StudyDB(db_path)
    app = FastAPI(title="judgeaudit annotation", docs_url=None, redoc_url=None, openapi_url=None)
    pages = {name: _static(name) for name in ("index.html", *_STATIC)}

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        resp = await call_next(request)
        resp.headers.update(_HEADERS)
        return resp

    app.add_middleware(_Guard, db=db)  # outermost: runs before any body is read

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        # the problems without the offending input (it may not even be encodable, e.g. a lone surrogate)
        detail = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
                  for e in exc.errors()]
        return JSONResponse({"detail": detail}, status_code=422)

    def bearer(request: Request) -> str:
        token = _token(request.headers.get("authorization", ""))
        if token is None:
            raise HTTPException(401, "missing token", headers={"WWW-Authenticate": "Bearer"})
        return token

    def annotator(token: str = Depends(bearer)) -> str:
        who = db.annotator_for(token)
        if who is None:
            raise HTTPException(401, "unknown token", headers={"WWW-Authenticate": "Bearer"})
        return who

    def admin(token: str = Depends(bearer)) -> None:
        if db.is_admin(token):
            return
        if db.annotator_for(token) is not None:
            raise HTTPException(403, "this link cannot open the admin view")
        raise HTTPException(401, "unknown token", headers={"WWW-Authenticate": "Bearer"})

    @app.get("/")
    def index() -> Response:
        return Response(pages["index.html"], media_type="text/html; charset=utf-8")

    @app.get("/static/{name}")
    def static(name: str) -> Response:
        if name not in _STATIC:
            raise HTTPException(404, "not found")
        return Response(pages[name], media_type=_STATIC[name])

    @app.get("/api/me")
    def me(who: str = Depends(annotator)) -> dict[str, Any]:
        return db.progress(who)

    def _item(who: str, position: int) -> dict[str, Any]:
        it = db.item_at(who, position)
        if it is None:
            raise HTTPException(404, "no item at this position")
        return it

    @app.get("/api/items/{position}")
    def item(position: Position, who: str = Depends(annotator)) -> dict[str, Any]:
        it = _item(who, position)
        return {"position": position, **db.progress(who), "evidence": it["evidence"], "a": it["a"], "b": it["b"],
                "answer": it["answer"]}

    @app.put("/api/items/{position}/answer")
    def answer(position: Position, body: AnswerIn, who: str = Depends(annotator)) -> Any:
        it = _item(who, position)
        basis = body.basis.strip()
        if body.answer in ("A", "B"):
            check = check_basis(basis, it["a"] if body.answer == "A" else it["b"])
            if not check.ok:
                return JSONResponse({"detail": {"field": "basis", "message": check.message}}, status_code=422)
        db.save_answer(who, it["item_idx"], body.answer, basis, body.note.strip(), body.same_facts)
        return {"saved": True, "position": position, **db.progress(who, after=position)}

    @app.get("/api/admin/progress")
    def admin_progress(_: None = Depends(admin)) -> dict[str, Any]:
        return {"study": db.study_meta(), "annotators": db.admin_progress()}

    @app.get("/api/admin/export")
    def admin_export(_: None = Depends(admin)) -> dict[str, Any]:
        return {"study": db.study_meta(), "answers": db.export_rows()}

    return app


def serve(db_path: str | Path, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Run the app with uvicorn (blocking)."""
    import uvicorn

    uvicorn.run(create_app(db_path), host=host, port=port, log_level="warning")
