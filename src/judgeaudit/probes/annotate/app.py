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
from typing import Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from judgeaudit.probes.annotate.basis import check_basis
from judgeaudit.probes.annotate.db import StudyDB

_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
_STATIC = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}


class AnswerIn(BaseModel):
    """One annotator's judgement of one pair (Appendix C: direction, basis, same_facts)."""

    model_config = ConfigDict(extra="forbid")

    answer: Literal["A", "B", "neither", "cannot_tell"]
    basis: str = Field(default="", max_length=4000)
    note: str = Field(default="", max_length=4000)
    same_facts: bool


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
        resp.headers["Content-Security-Policy"] = _CSP
        resp.headers["X-Content-Type-Options"] = "nosniff"
        resp.headers["Referrer-Policy"] = "no-referrer"
        resp.headers["X-Frame-Options"] = "DENY"
        resp.headers["Cache-Control"] = "no-store"
        return resp

    def bearer(request: Request) -> str:
        auth = request.headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise HTTPException(401, "missing token", headers={"WWW-Authenticate": "Bearer"})
        return token.strip()

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
    def item(position: int, who: str = Depends(annotator)) -> dict[str, Any]:
        it = _item(who, position)
        return {"position": position, **db.progress(who), "evidence": it["evidence"], "a": it["a"], "b": it["b"],
                "answer": it["answer"]}

    @app.put("/api/items/{position}/answer")
    def answer(position: int, body: AnswerIn, who: str = Depends(annotator)) -> Any:
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
