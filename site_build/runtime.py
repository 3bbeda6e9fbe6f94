"""What the calculators run on, shipped once per `mkdocs build` (after the default language's
build): Pyodide's runtime files copied from node_modules/pyodide into `assets/pyodide/`, a real
wheel of `calc` built from pyproject.toml into `assets/calc/` (named in
`assets/calc/manifest.json`), and a memory snapshot of Pyodide with calc imported and warmed up
(`make_snapshot.mjs` under Node; `assets/calc/snapshot.bin`, named in the manifest), which the
worker restores instead of booting Python. The snapshot is kept in `.cache/snapshot/` (or
$CALC_SNAPSHOT_CACHE), keyed by the runtime files, the wheel and the script, so unchanged inputs
are not snapshotted again.

The service worker (docs/assets/calc/sw.js) is written to the site's root as /sw.js (its scope
the whole site, no Service-Worker-Allowed header needed), with this build's id (`build` in the
manifest too) and the files it caches; the unfilled copy mkdocs puts under assets/calc/ is
removed by site_build/hosting.py once every language is built."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .common import DEFAULT_LOCALE, ROOT, fail, site_locale

#: Runtime files of the pinned Pyodide that the site serves itself (plus every *.map file).
PYODIDE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
    "package.json",
)
#: The memory snapshot the worker restores (assets/calc/SNAPSHOT_NAME, named in the manifest).
SNAPSHOT_NAME = "snapshot.bin"
#: The lite standard library of a plain boot on a slow line (make_snapshot.mjs's OUT.lite: the
#: modules calc needs, precompiled), named in the manifest as `stdlib_lite`. A zip archive, but
#: stored uncompressed: `.bin`, so the host compresses it as a whole (hosting.PRECOMPRESS).
LITE_NAME = "stdlib-lite.bin"
#: Below this download rate of the .wasm's first bytes (bytes per second, the manifest's
#: `boot.lite_below`) the worker boots with the lite standard library instead of restoring the
#: snapshot: the snapshot moves about 2.5 MB more (Brotli) and saves about 1.1 s of CPU
#: (BENCHMARKS.md section 7), so it pays from about 2.3 MB/s (18 Mbit/s) up.
LITE_BELOW_BYTES_PER_S = 2_000_000
#: How long the worker measures that rate before it chooses (or until the .wasm is complete).
LITE_DECIDE_MS = 400
SNAPSHOT_SCRIPT = ROOT / "make_snapshot.mjs"
#: The snapshot's delta against the .wasm's data (imported by the script and by the worker).
SNAPSHOT_DELTA = ROOT / "docs" / "assets" / "calc" / "delta.mjs"


# Once per full build (the default language is built first, then static-i18n builds the
# others into the same directory without cleaning it): ship Pyodide, the wheel, the snapshot.
def ship_runtime(config) -> None:
    if site_locale(config) != DEFAULT_LOCALE:
        return
    site_dir = Path(config.site_dir)
    copy_pyodide(ROOT / "node_modules" / "pyodide", site_dir / "assets" / "pyodide")
    wheel = build_wheel(ROOT, site_dir / "assets" / "calc")
    build_snapshot(site_dir / "assets" / "pyodide", wheel, site_dir / "assets" / "calc")
    write_service_worker(site_dir)


# Pyodide's runtime files into `dest` (unchanged ones are not copied again).
def copy_pyodide(src: Path, dest: Path) -> list[str]:
    missing = [name for name in PYODIDE_FILES if not (src / name).is_file()]
    if missing:
        raise fail(f"Pyodide's runtime is missing from {src} ({', '.join(missing)}). "
                   "Run `make site` (or `npm ci`) first: the calculators need it.")
    dest.mkdir(parents=True, exist_ok=True)
    names = list(PYODIDE_FILES) + sorted(p.name for p in src.glob("*.map"))
    for name in names:
        s, d = src / name, dest / name
        if (d.is_file() and d.stat().st_size == s.stat().st_size
                and d.stat().st_mtime >= s.stat().st_mtime):
            continue
        shutil.copy2(s, d)
    return names


# SHA-256 of what the wheel is built from: pyproject.toml and calc/.
def _sources_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted([root / "pyproject.toml", *(root / "calc").rglob("*")]):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def build_wheel(root: Path, dest: Path) -> Path:
    """A real `py3-none-any` wheel of calc from pyproject.toml (setuptools, no network), built
    in a scratch copy of the sources so no build/ or egg-info/ lands in the checkout. The
    timestamps are fixed (SOURCE_DATE_EPOCH), so the same sources give the same bytes."""
    dest.mkdir(parents=True, exist_ok=True)
    digest = _sources_digest(root)
    manifest_path = dest / "manifest.json"
    if manifest_path.is_file():
        try:
            old = json.loads(manifest_path.read_text(encoding="utf-8"))
            if old.get("sources") == digest and (dest / old["wheel"]).is_file():
                return dest / old["wheel"]
        except (ValueError, KeyError, TypeError):
            pass
    with tempfile.TemporaryDirectory(prefix="calc-wheel-") as tmp:
        work = Path(tmp) / "src"
        work.mkdir()
        shutil.copy2(root / "pyproject.toml", work / "pyproject.toml")
        shutil.copytree(root / "calc", work / "calc",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        out = Path(tmp) / "dist"
        env = dict(os.environ, SOURCE_DATE_EPOCH="315532800", PIP_NO_INPUT="1")
        cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
               "--no-index", "--quiet", "--wheel-dir", str(out), str(work)]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise fail(f"building the calc wheel failed ({' '.join(cmd)}):\n"
                       f"{proc.stdout}\n{proc.stderr}")
        wheels = sorted(out.glob("*.whl"))
        if len(wheels) != 1:
            raise fail(f"expected one wheel, found {wheels}")
        for old_wheel in dest.glob("*.whl"):
            old_wheel.unlink()
        wheel = dest / wheels[0].name
        shutil.copy2(wheels[0], wheel)
    data = wheel.read_bytes()
    manifest = {
        "wheel": wheel.name,
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
        "sources": digest,
    }
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return wheel


# The snapshot's cache key: SHA-256 over the script, the runtime files and the wheel.
def _snapshot_key(pyodide_dir: Path, wheel: Path) -> str:
    h = hashlib.sha256()
    for p in (SNAPSHOT_SCRIPT, SNAPSHOT_DELTA, pyodide_dir / "pyodide.asm.wasm",
              pyodide_dir / "pyodide.asm.mjs", pyodide_dir / "pyodide.mjs",
              pyodide_dir / "python_stdlib.zip", wheel):
        h.update(p.name.encode())
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


#: What the worker downloads (or imports) on its way to "ready", beside the wheel and the snapshot.
RUNTIME_DOWNLOADS = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
                     "pyodide-lock.json")


def download_sizes(pyodide_dir: Path, wheel: Path, snapshot: Path,
                   lite: Path | None = None) -> dict[str, int]:
    """The manifest's `files`: {path relative to manifest.json: bytes} of every file the worker
    may fetch before it is ready. The worker (net.js) adds up the ones its path takes (the
    snapshot; the lite standard library; or the standard library alone) for the page's
    progress, and refuses a body of another size (a download cut short)."""
    out = {f"../pyodide/{name}": (pyodide_dir / name).stat().st_size for name in RUNTIME_DOWNLOADS}
    out[wheel.name] = wheel.stat().st_size
    out[snapshot.name] = snapshot.stat().st_size
    if lite is not None:
        out[lite.name] = lite.stat().st_size
    return out


def build_snapshot(pyodide_dir: Path, wheel: Path, dest: Path) -> Path:
    """Pyodide's memory with calc imported and warmed up, made by Node (`make_snapshot.mjs`),
    cached by the hash of its inputs (with the script's OUT.json and OUT.lite beside it: the
    delta, and the lite standard library shipped as LITE_NAME); named in
    dest/manifest.json (`snapshot`, its size and SHA-256 as shipped, `snapshot_delta`: the
    range written as a delta against the runtime's own data, which worker.js undoes)."""
    cache = Path(os.environ.get("CALC_SNAPSHOT_CACHE") or ROOT / ".cache" / "snapshot")
    key = _snapshot_key(pyodide_dir, wheel)
    cached = cache / f"{key}.bin"
    if not cached.is_file():
        node = shutil.which("node")
        if node is None:
            raise fail("Node.js is needed to make the Pyodide snapshot")
        cache.mkdir(parents=True, exist_ok=True)
        tmp = cache / f"{key}.tmp"
        proc = subprocess.run([node, str(SNAPSHOT_SCRIPT), str(pyodide_dir), str(wheel), str(tmp)],
                              capture_output=True, text=True)
        tmp_delta = tmp.with_name(tmp.name + ".json")
        tmp_lite = tmp.with_name(tmp.name + ".lite")
        if proc.returncode != 0 or not all(p.is_file() for p in (tmp, tmp_delta, tmp_lite)):
            for p in (tmp, tmp_delta, tmp_lite):
                p.unlink(missing_ok=True)
            raise fail(f"making the Pyodide snapshot failed:\n{proc.stdout}\n{proc.stderr}")
        for old in [*cache.glob("*.bin"), *cache.glob("*.bin.json"), *cache.glob("*.bin.lite")]:
            old.unlink()  # one snapshot is kept: the current one
        tmp_delta.replace(cached.with_name(cached.name + ".json"))
        tmp_lite.replace(cached.with_name(cached.name + ".lite"))
        tmp.replace(cached)
    delta = json.loads(cached.with_name(cached.name + ".json").read_text(encoding="utf-8"))
    target = dest / SNAPSHOT_NAME
    shutil.copyfile(cached, target)
    lite = dest / LITE_NAME
    shutil.copyfile(cached.with_name(cached.name + ".lite"), lite)
    data = target.read_bytes()
    manifest_path = dest / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest.update({"snapshot": SNAPSHOT_NAME, "snapshot_size": len(data),
                     "snapshot_sha256": hashlib.sha256(data).hexdigest(),
                     "snapshot_delta": delta, "stdlib_lite": LITE_NAME,
                     "boot": {"lite_below": LITE_BELOW_BYTES_PER_S, "decide_ms": LITE_DECIDE_MS},
                     "files": download_sizes(pyodide_dir, wheel, target, lite)})
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return target


#: The service worker's source (the build writes it to the site's root, filled in).
SW_SOURCE = ROOT / "docs" / "assets" / "calc" / "sw.js"
SW_NAME = "sw.js"
SW_PLACEHOLDER = 'const BUILD = { id: "dev", runtime: [], scripts: [] }; // replaced by the build'
#: The calculator's own files, cached by the service worker for offline use (served from the
#: network while online, so a new page script is never held back).
SW_SCRIPTS = ("assets/calc/page.js", "assets/calc/messages.js", "assets/calc/copy.js",
              "assets/calc/patch.js",
              "assets/calc/boot.js",
              "assets/calc/offline.js",
              "assets/calc/worker.js", "assets/calc/worker-python.js", "assets/calc/net.js", "assets/calc/delta.mjs",
              "assets/calc/calc.css")


def write_service_worker(site_dir: Path) -> Path:
    """/sw.js with this build's id and files; the id (SHA-256 over the manifest, the runtime
    files, the calculator's scripts and the worker's source) also goes into the manifest as
    `build`, which the service worker compares with the server's before it answers from its
    cache."""
    calc_dir = site_dir / "assets" / "calc"
    manifest_path = calc_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest.pop("build", None)
    runtime = sorted({f"assets/calc/{p}" if not p.startswith("../")
                      else "assets/" + p[len("../"):] for p in manifest.get("files", {})}
                     | {"assets/calc/manifest.json"})
    source = SW_SOURCE.read_text(encoding="utf-8")
    if SW_PLACEHOLDER not in source:
        raise fail(f"{SW_SOURCE} lacks its build line: {SW_PLACEHOLDER}")
    h = hashlib.sha256(json.dumps(manifest, sort_keys=True).encode())
    for rel in [p for p in runtime if not p.endswith("manifest.json")] + list(SW_SCRIPTS):
        h.update(rel.encode())
        h.update(hashlib.sha256((site_dir / rel).read_bytes()).digest())
    h.update(source.encode())
    build = h.hexdigest()[:16]
    manifest["build"] = build
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    filled = json.dumps({"id": build, "runtime": runtime, "scripts": list(SW_SCRIPTS)})
    out = site_dir / SW_NAME
    out.write_text(source.replace(SW_PLACEHOLDER, f"const BUILD = {filled};"), encoding="utf-8")
    return out
