"""serve.py's reader's line (`--line`, `Line`; the benchmark's throttled profiles): a round trip
before each response and one more for a new connection, and one downlink of the line's rate
that parallel downloads share. Expected times are worked out from the line's definition: bytes
over rate, plus round trips."""

from __future__ import annotations

import threading
import time
import urllib.request
from pathlib import Path

import pytest

import serve
from serve import Line, make_server

SIZE = 256 * 3906  # bytes of the file downloaded (999,936)
MBIT = 40.0  # 5 MB/s: 0.2 s for the file
RTT_MS = 100.0


@pytest.fixture()
def line_site(tmp_path: Path):
    (tmp_path / "index.html").write_text("<!doctype html><title>t</title>", encoding="utf-8")
    (tmp_path / "blob.zip").write_bytes(bytes(range(256)) * (SIZE // 256))  # sent as it is
    server = make_server(tmp_path, port=0, quiet=True, line=Line(MBIT, RTT_MS))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    yield server, f"http://{host}:{port}/"
    server.shutdown()
    server.server_close()


def _timed_get(url: str, out: list) -> None:
    t0 = time.monotonic()
    with urllib.request.urlopen(url, timeout=30) as r:
        body = r.read()
    out.append((time.monotonic() - t0, len(body)))


def test_one_download_takes_its_bytes_over_the_rate_plus_two_round_trips(line_site):
    _, url = line_site
    got: list = []
    _timed_get(url + "blob.zip", got)
    elapsed, size = got[0]
    assert size == SIZE
    transfer = SIZE / (MBIT * 1e6 / 8)  # 0.2 s
    floor = transfer + 2 * RTT_MS / 1000  # handshake + request: 0.4 s
    assert floor <= elapsed < floor + 0.35, elapsed


def test_parallel_downloads_share_the_line(line_site):
    _, url = line_site
    got: list = []
    threads = [threading.Thread(target=_timed_get, args=(url + "blob.zip", got))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    floor = 3 * SIZE / (MBIT * 1e6 / 8) + 2 * RTT_MS / 1000  # one downlink: 0.6 s + 0.2 s
    assert max(e for e, _ in got) >= floor
    # shared, not one after the other: every download ends near the others
    assert max(e for e, _ in got) - min(e for e, _ in got) < 0.3


def test_without_a_line_the_server_is_as_fast_as_the_machine(line_site):
    server, url = line_site
    server.line = None
    got: list = []
    _timed_get(url + "blob.zip", got)
    assert got[0][0] < 2 * RTT_MS / 1000


@pytest.mark.parametrize("text", ["9", "fast", "0:150", "9:-1", "9:150:3", ""])
def test_a_line_that_is_not_mbit_colon_rtt_is_refused_with_the_flag_named(text, tmp_path, capsys):
    (tmp_path / "index.html").write_text("x", encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        serve.main(["--dir", str(tmp_path), "--line", text])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--line" in err and "MBIT:RTT_MS" in err and "Traceback" not in err
