"""Annotation app under concurrent annotators (construct-validity.txt App. C; issue 6 benchmark).

The app runs in its own process (uvicorn on 127.0.0.1, a free port), as ``judgeaudit probes
annotate serve`` runs it. Scripted httpx clients save answers: first one annotator alone, then three
at once, 500 answers each. Reported: median and p95 latency of a saved answer (request sent →
commit acknowledged) solo and concurrent side by side, their ratio, throughput, and whether every
answer is in the database afterwards.

    python benchmarks/annotation_app.py [--answers 500]
"""

from __future__ import annotations

import argparse
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np

from judgeaudit.probes.annotate import init_study
from judgeaudit.records import Probe


def _probes(n: int) -> list[Probe]:
    slots = ["hedging_removal", "population_widening", "register_shift", "reordering"]
    return [Probe(probe_id=f"p{i}", base_id=f"b{i}", group="g", domain="d", criterion="c",
                  evidence=f"A study of {i} streams found loads rose in {i % 7 + 2} warm summers.",
                  original=f"In the {i} sampled streams, loads may have risen in warm summers.",
                  edited=f"In all streams, loads rose in warm summers (case {i}).", slot=slots[i % 4])
            for i in range(n)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _label(base: str, token: str, n: int, lat: list[float], errors: list[str]) -> None:
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
        for pos in range(1, n + 1):
            item = c.get(f"/api/items/{pos}").json()
            if pos % 2:        # a side with a two-span basis: exercises the normalised span check
                side = "A" if item["a"].startswith("In all") else "B"
                body = {"answer": side, "basis": "In all streams ... rose in warm summers", "same_facts": True}
            else:
                body = {"answer": "neither", "same_facts": True}
            t0 = time.perf_counter()
            r = c.put(f"/api/items/{pos}/answer", json=body)
            lat.append(time.perf_counter() - t0)
            if r.status_code != 200:
                errors.append(f"{pos}: {r.status_code} {r.text[:100]}")


def _run(base: str, tokens: list[str], n: int) -> tuple[np.ndarray, float, list[str]]:
    lats: list[list[float]] = [[] for _ in tokens]
    errors: list[str] = []
    threads = [threading.Thread(target=_label, args=(base, t, n, lats[i], errors)) for i, t in enumerate(tokens)]
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return np.array([x for lat in lats for x in lat]) * 1000, time.perf_counter() - t0, errors


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--answers", type=int, default=500)
    args = ap.parse_args()
    n = args.answers
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "study.sqlite"
        tokens = init_study(db, _probes(n), 4, seed=0)
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        server = subprocess.Popen([sys.executable, "-c", "import sys; from judgeaudit.probes.annotate.app import "
                                   "serve; serve(sys.argv[1], port=int(sys.argv[2]))", str(db), str(port)])
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    if httpx.get(base + "/", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit("server did not start")
                time.sleep(0.1)
            ann = list(tokens.annotator_tokens.values())
            solo, solo_s, e1 = _run(base, ann[:1], n)
            conc, conc_s, e2 = _run(base, ann[1:], n)
        finally:
            server.terminate()
            server.wait(timeout=10)
        con = sqlite3.connect(db)
        stored = dict(con.execute("SELECT annotator_id, COUNT(*) FROM answers GROUP BY annotator_id").fetchall())
        logged = con.execute("SELECT COUNT(*) FROM answer_log").fetchone()[0]
        mode = con.execute("PRAGMA journal_mode").fetchone()[0]
        con.close()

    def row(name: str, lat: np.ndarray, secs: float) -> str:
        return (f"{name:<22}{len(lat):>8}{np.median(lat):>10.2f}{np.percentile(lat, 95):>10.2f}"
                f"{lat.max():>10.2f}{len(lat) / secs:>12.1f}")

    print(f"annotation app, SQLite journal_mode={mode}, synchronous=FULL, server in its own process")
    print(f"{'':<22}{'answers':>8}{'p50 ms':>10}{'p95 ms':>10}{'max ms':>10}{'answers/s':>12}")
    print(row("1 annotator alone", solo, solo_s))
    print(row("3 annotators at once", conc, conc_s))
    print(f"ratio concurrent/solo: p50 {np.median(conc) / np.median(solo):.2f}x, "
          f"p95 {np.percentile(conc, 95) / np.percentile(solo, 95):.2f}x, "
          f"throughput {(len(conc) / conc_s) / (len(solo) / solo_s):.2f}x")
    expected = {a: n for a in tokens.annotator_tokens}
    ok = stored == expected and logged == 4 * n and not (e1 or e2)
    print(f"answers in the database: {stored} (log rows {logged}); errors: {len(e1) + len(e2)}; "
          f"every answer stored: {'yes' if ok else 'NO'}")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
