"""The engine's unit tests (tests/unit) run again inside Pyodide, Python 3.14 on
wasm32-emscripten, under Node: `calc` must behave there exactly as it does at build time.

Each case fetches the pinned wheels if they are missing (`tests/pyodide/fetch_wheels.py`), runs
`node tests/pyodide/run.mjs`, and passes only if pytest inside Pyodide exited 0, reported some
passed tests and no failure or error, ran every tests/unit file but the ones run.mjs excludes
(with their reason), and imported calc from where the case says: the repository (`source`) or
the wheel the site ships (`wheel`, built by the site build's own `build_wheel`). On failure the whole
Pyodide output is shown.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "tests" / "pyodide"
RUNNER = HERE / "run.mjs"
FETCH = HERE / "fetch_wheels.py"
WHEELS = ROOT / ".cache" / "pyodide-wheels"
TIMEOUT = 600  # seconds for one run; about 20-40 s here

_SUMMARY = re.compile(r"^=+ (.*?) in [\d.]+s(?: \([^)]*\))? =+$", re.M)
_COUNT = re.compile(r"(\d+) (passed|failed|skipped|deselected|xfailed|xpassed|warnings?|errors?"
                    r"|rerun)\b")


def summary(output: str) -> dict[str, int] | None:
    """Counts from pytest's last closing line ("== 3 failed, 247 passed in 7.1s =="), or None."""
    lines = _SUMMARY.findall(output)
    if not lines:
        return None
    counts: dict[str, int] = {}
    for number, word in _COUNT.findall(lines[-1]):
        word = {"warning": "warnings", "error": "errors"}.get(word, word)
        counts[word] = counts.get(word, 0) + int(number)
    return counts


def excluded_files() -> dict[str, str]:
    """run.mjs's EXCLUDED table: test file -> why it cannot run in Pyodide."""
    text = RUNNER.read_text(encoding="utf-8")
    block = re.search(r"const EXCLUDED = \{(.*?)\n\};", text, re.S)
    assert block, "run.mjs has no EXCLUDED table"
    return dict(re.findall(r'"(tests/[^"]+)":\s*"([^"]+)"', block.group(1)))


def problems(code: int, output: str, calc_from: str) -> list[str]:
    """Everything wrong with one Pyodide run; empty when it proves what it should."""
    found = []
    if code != 0:
        found.append(f"run.mjs exited {code}")
    counts = summary(output)
    if counts is None:
        found.append("no pytest summary line in the output")
        counts = {}
    if counts.get("passed", 0) == 0:
        found.append("no test passed")
    for bad in ("failed", "errors"):
        if counts.get(bad):
            found.append(f"{counts[bad]} {bad}")
    if not re.search(r"^platform emscripten -- Python 3\.\d+", output, re.M):
        found.append("the tests did not run on emscripten (no 'platform emscripten' header)")
    if not re.search(rf"^calc \S+ from {re.escape(calc_from)}", output, re.M):
        found.append(f"calc was not imported from {calc_from}")
    ran = set(re.findall(r"^(tests/unit/\S+\.py) ", output, re.M))
    skipped = excluded_files()
    for path in sorted((ROOT / "tests" / "unit").glob("test_*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel not in skipped and rel not in ran:
            found.append(f"{rel} did not run in Pyodide (not listed in run.mjs EXCLUDED either)")
    return found


@pytest.fixture(scope="module")
def node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: the Pyodide run needs Node 20", pytrace=False)
    if not (ROOT / "node_modules" / "pyodide" / "pyodide.mjs").is_file():
        pytest.fail("node_modules/pyodide is missing: run `npm ci`", pytrace=False)
    return node


@pytest.fixture(scope="module")
def wheels() -> Path:
    """pytest, hypothesis, babel & co. for Python 3.14/emscripten, fetched once into .cache."""
    proc = subprocess.run([sys.executable, str(FETCH), "--quiet", "--dest", str(WHEELS)],
                          cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)
    if proc.returncode != 0:
        pytest.fail(f"fetching the Pyodide wheels failed:\n{proc.stdout}\n{proc.stderr}",
                    pytrace=False)
    return WHEELS


def build_calc_wheel(dest: Path) -> Path:
    """The calc wheel exactly as the site ships it: the site build's own `build_wheel`."""
    from build_tables import build_wheel

    return build_wheel(ROOT, dest)


class Run:
    """One `node run.mjs` started in the background; output goes to a log file."""

    def __init__(self, cmd: list[str], log: Path, calc_from: str, wheel: Path | None = None):
        self.log, self.calc_from, self.wheel = log, calc_from, wheel
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "NODE_OPTIONS"))}
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def result(self) -> tuple[int | None, str]:
        try:
            code = self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            code = None
        return code, self.log.read_text(encoding="utf-8", errors="replace")


@pytest.fixture(scope="module")
def pyodide_runs(request, node, wheels, tmp_path_factory):
    """The selected runs start at once: each is one single-threaded wasm process, so on two
    cores the pair takes about the wall time of one."""
    selected = {item.callspec.params["mode"] for item in request.session.items
                if getattr(item, "originalname", None) == "test_unit_suite_passes_in_pyodide"}
    tmp = tmp_path_factory.mktemp("pyodide")
    cmd = [node, str(RUNNER), "--wheels", str(wheels)]
    runs: dict[str, Run] = {}
    if "source" in selected:
        runs["source"] = Run(cmd, tmp / "source.log", "/repo/calc/__init__.py")
    if "wheel" in selected:  # calc from site-packages inside Pyodide
        wheel = build_calc_wheel(tmp / "wheel")
        runs["wheel"] = Run(cmd + ["--wheel", str(wheel)], tmp / "wheel.log", "/lib/python3.",
                            wheel)
    yield runs
    for run in runs.values():
        if run.proc.poll() is None:
            run.proc.kill()
            run.proc.wait()


@pytest.mark.parametrize("mode", ["source", "wheel"])
def test_unit_suite_passes_in_pyodide(mode, pyodide_runs):
    run = pyodide_runs[mode]
    code, output = run.result()
    if code is None:
        pytest.fail(f"run.mjs did not finish in {TIMEOUT} s:\n{output}", pytrace=False)
    found = problems(code, output, run.calc_from)
    if run.wheel is not None and f"(wheel {run.wheel.name})" not in output:
        found.append(f"the run did not use the wheel {run.wheel.name}")
    if found:
        pytest.fail("inside Pyodide: " + "; ".join(found) + "\n\n" + output, pytrace=False)
    print(output)


# The checks above must catch a failing run even when the exit code alone would not.

_GOOD = """platform emscripten -- Python 3.14.2, pytest-9.2.0, pluggy-1.7.0
calc 0.1.0 from /repo/calc/__init__.py (source)
{files}
======================== 250 passed, 1 warning in 6.82s ========================
"""


def _ran_lines() -> str:
    skipped = excluded_files()
    return "\n".join(f"{p.relative_to(ROOT).as_posix()} ...."
                     for p in sorted((ROOT / "tests" / "unit").glob("test_*.py"))
                     if p.relative_to(ROOT).as_posix() not in skipped)


def test_checker_accepts_a_clean_run():
    assert problems(0, _GOOD.format(files=_ran_lines()), "/repo/calc/__init__.py") == []
    assert summary(_GOOD) == {"passed": 250, "warnings": 1}


@pytest.mark.parametrize("code, closing, expected", [
    (1, "== 1 failed, 249 passed in 7.1s ==", "1 failed"),
    (0, "== 1 failed, 249 passed in 7.1s ==", "1 failed"),
    (2, "== 3 errors in 1.0s ==", "3 errors"),
    (1, "== 248 passed, 1 error in 7.1s ==", "1 errors"),
    (5, "== no tests ran in 0.1s ==", "no test passed"),
    (0, "", "no pytest summary line"),
    (10, "", "run.mjs exited 10"),
])
def test_checker_rejects_a_bad_run(code, closing, expected):
    output = _GOOD.format(files=_ran_lines()).replace(
        "======================== 250 passed, 1 warning in 6.82s ========================", closing)
    assert any(expected in p for p in problems(code, output, "/repo/calc/__init__.py"))


def test_checker_rejects_cpython_a_missing_file_and_the_wrong_calc():
    output = _GOOD.format(files=_ran_lines())
    assert any("emscripten" in p for p in
               problems(0, output.replace("platform emscripten", "platform linux"), "/repo/"))
    assert any("not imported from /lib/python3." in p for p in problems(0, output, "/lib/python3."))
    first = _ran_lines().splitlines()[0]
    assert any("did not run in Pyodide" in p for p in
               problems(0, output.replace(first + "\n", ""), "/repo/calc/__init__.py"))
