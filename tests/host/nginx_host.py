"""nginx serving a built site with the shipped configuration (hosting/nginx.conf), for the
tests: the file's own text, with only its `root` and `listen` lines pointed at the test's
build and port, inside a minimal main configuration (Debian's modules, a private prefix)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "hosting" / "nginx.conf"
SHIPPED_ROOT = "/srv/gpu-memory-guide"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
#: Debian's libnginx-mod-http-brotli-static (its modules-enabled file names it relative to
#: nginx's own prefix, which the tests replace with a private one).
BROTLI_STATIC = "/usr/share/nginx/modules/ngx_http_brotli_static_module.so"


def site_config(site: Path, host: str, port: int) -> str:
    """The shipped server configuration for `site` on host:port."""
    text = SHIPPED.read_text(encoding="utf-8")
    assert SHIPPED_ROOT in text and re.search(r"^\s*listen 80;", text, re.M), \
        "hosting/nginx.conf no longer has the root and listen lines the tests rewrite"
    text = text.replace(SHIPPED_ROOT, str(site))
    return re.sub(r"^(\s*)listen 80;", rf"\1listen {host}:{port};", text, count=1, flags=re.M)


class Nginx:
    """`with Nginx(site, host, port) as url:` an nginx in the foreground, stopped after."""

    def __init__(self, site: Path, host: str, port: int, workdir: Path):
        self.site, self.host, self.port, self.dir = site, host, port, workdir
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> str:
        if not Path(NGINX).exists():
            raise RuntimeError("nginx is not installed (make test installs it: apt-get install "
                               "nginx libnginx-mod-http-brotli-static)")
        self.dir.mkdir(parents=True, exist_ok=True)
        for sub in ("logs", "tmp"):
            (self.dir / sub).mkdir(exist_ok=True)
        (self.dir / "site.conf").write_text(site_config(self.site, self.host, self.port),
                                            encoding="utf-8")
        # As root, nginx's workers would run as nobody and could not read pytest's private
        # temporary directories; as another user they run as that user anyway.
        user = "user root;" if os.geteuid() == 0 else ""
        main = f"""
load_module {BROTLI_STATIC};
{user}
worker_processes 1;
daemon off;
pid {self.dir}/nginx.pid;
error_log {self.dir}/logs/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {self.dir}/tmp/body;
    proxy_temp_path {self.dir}/tmp/proxy;
    fastcgi_temp_path {self.dir}/tmp/fastcgi;
    uwsgi_temp_path {self.dir}/tmp/uwsgi;
    scgi_temp_path {self.dir}/tmp/scgi;
    sendfile on;
    keepalive_timeout 30;
    include {self.dir}/site.conf;
}}
"""
        conf = self.dir / "nginx.conf"
        conf.write_text(main, encoding="utf-8")
        check = subprocess.run([NGINX, "-t", "-p", str(self.dir), "-c", str(conf)],
                               capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(f"nginx -t rejected the shipped configuration:\n{check.stderr}")
        self.proc = subprocess.Popen([NGINX, "-p", str(self.dir), "-c", str(conf)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        url = f"http://{self.host}:{self.port}/"
        deadline = time.monotonic() + 10
        while True:
            try:
                urllib.request.urlopen(url, timeout=1).read()
                return url
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                    raise RuntimeError(f"nginx did not start: {err}")
                time.sleep(0.05)

    def __exit__(self, *exc) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
