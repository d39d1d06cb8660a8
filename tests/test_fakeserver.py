"""The tests' loopback server: a client that resets its connection mid-request (a run a test killed) leaves no
traceback on the test's output; the server still answers the next client."""

from __future__ import annotations

import json
import socket
import struct
import time
import urllib.request

from fakeserver import FakeServer


def test_a_client_that_resets_mid_request_leaves_no_traceback(capfd):
    with FakeServer(responder=lambda p: "Score: 5") as srv:
        host, port = srv.base_url.split("//", 1)[1].split("/", 1)[0].split(":")
        s = socket.create_connection((host, int(port)))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))   # close sends a reset
        s.close()
        time.sleep(0.5)
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
        req = urllib.request.Request(srv.base_url.rstrip("/") + "/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            assert "Score: 5" in r.read().decode()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ConnectionResetError" not in err, err
