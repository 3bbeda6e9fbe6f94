"""Fetch the wheels that `run.mjs` installs into Pyodide: pytest and its dependencies,
hypothesis (+ sortedcontainers) and Babel, at the versions `requirements.txt` pins.

    python tests/pyodide/fetch_wheels.py [--dest DIR]

Wheels go to `.cache/pyodide-wheels/` (gitignored) with a manifest, `wheels.txt`, naming the
exact files `run.mjs` unpacks. Nothing is downloaded when every pinned wheel is already there.

The target is the Pyodide in `node_modules/pyodide`: Python version and ABI come from its
`pyodide-lock.json`. Pure-Python wheels are `py3-none-any`; hypothesis ships a native module
since 6.156, and PyPI carries its `cp314-cp314-pyemscripten_<abi>_wasm32` wheel, which loads in
Pyodide like any other wheel.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DEST = REPO / ".cache" / "pyodide-wheels"
LOCK = REPO / "node_modules" / "pyodide" / "pyodide-lock.json"
MANIFEST = "wheels.txt"

# What the unit tests need inside Pyodide. Versions come from requirements.txt; these are only
# the fallback for a package requirements.txt stops pinning.
PACKAGES = {
    "pytest": "9.2.0",
    "pluggy": "1.7.0",
    "iniconfig": "2.3.1",
    "packaging": "26.4",
    "pygments": "2.21.0",
    "hypothesis": "6.170.17",
    "sortedcontainers": "2.4.0",
    "babel": "2.19.0",
}


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins() -> dict[str, str]:
    pinned: dict[str, str] = {}
    req = REPO / "requirements.txt"
    if req.exists():
        for line in req.read_text().splitlines():
            m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;#]+)", line)
            if m:
                pinned[normalize(m.group(1))] = m.group(2)
    return {name: pinned.get(name, fallback) for name, fallback in PACKAGES.items()}


def target() -> tuple[str, str]:
    """(python version "3.14", emscripten platform tag) of the Pyodide in node_modules."""
    if not LOCK.exists():
        sys.exit(f"{LOCK} is missing: run `npm ci` first")
    info = json.loads(LOCK.read_text())["info"]
    python = ".".join(info["python"].split(".")[:2])
    return python, f"pyemscripten_{info['abi_version']}_{info.get('arch', 'wasm32')}"


def wheel_for(dest: Path, name: str, version: str, platform: str) -> Path | None:
    """The cached wheel of name==version that this Pyodide can load, if any."""
    for whl in sorted(dest.glob("*.whl")):
        parts = whl.name[:-4].split("-")  # dist-version[-build]-python-abi-platform
        tags = parts[-1].split(".")
        if (normalize(parts[0]) == name and parts[1] == version
                and ("any" in tags or platform in tags)):
            return whl
    return None


def fetch(dest: Path = DEFAULT_DEST, quiet: bool = False) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    wanted = pins()
    python, platform = target()
    missing = [f"{n}=={v}" for n, v in wanted.items()
               if wheel_for(dest, n, v, platform) is None]
    if missing:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--python-version", python, "--implementation", "cp",
               "--abi", "cp" + python.replace(".", ""), "--abi", "none",
               "--platform", "any", "--platform", platform, "-d", str(dest), *missing]
        if not quiet:
            print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL if quiet else None)
    files = []
    for name, version in wanted.items():
        whl = wheel_for(dest, name, version, platform)
        if whl is None:
            sys.exit(f"no wheel of {name}=={version} in {dest} after pip download")
        files.append(whl)
    (dest / MANIFEST).write_text("".join(f.name + "\n" for f in files))
    return files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args()
    for whl in fetch(args.dest, args.quiet):
        print(whl)


if __name__ == "__main__":
    main()
