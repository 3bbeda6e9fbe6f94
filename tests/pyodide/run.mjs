// Run the engine's unit tests (tests/unit) inside Pyodide under Node: same test files, same
// `calc` sources, but Python 3.14 on wasm32-emscripten, as in the browser.
//
//   python tests/pyodide/fetch_wheels.py        # once: pytest, hypothesis, babel wheels
//   node tests/pyodide/run.mjs [--wheel dist/calc-X-py3-none-any.whl] [-- <pytest args>]
//
// Without --wheel, `calc` is imported from the repository, mounted at /repo. With --wheel, the
// wheel is unpacked into site-packages and `calc` must come from there (checked: the run stops
// if any calc module was imported from /repo). The repository is read-only for Python: an audit
// hook refuses any write under /repo. Exit code: pytest's (0 = all passed), 10 = the runner
// itself failed (Pyodide did not load, wheels missing, ...).
//
// Test files that cannot run in Pyodide are listed in EXCLUDED with the reason; every other
// test file under tests/unit is collected automatically.

import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const MOUNT = "/repo";

const EXCLUDED = {
  "tests/unit/test_export.py": "reads the exported YAML back with PyYAML, which this run does not install (calc.export is plain Python, tested in CPython)",
  "tests/unit/test_glue_net.py": "checks the manifest the site build writes (site_build.runtime needs mkdocs)",
  "tests/unit/test_cli.py": "spawns `python -m calc` subprocesses; Pyodide has no subprocesses",
};

function fail(message) {
  process.stderr.write(`run.mjs: ${message}\n`);
  process.exit(10);
}

function parseArgs(argv) {
  const opts = { wheel: null, wheels: join(REPO, ".cache", "pyodide-wheels"), pytest: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") { opts.pytest = argv.slice(i + 1); break; }
    else if (arg === "--wheel") opts.wheel = resolve(argv[++i]);
    else if (arg === "--wheels") opts.wheels = resolve(argv[++i]);
    else fail(`unknown argument ${arg} (pytest arguments go after --)`);
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const started = Date.now();
const seconds = () => ((Date.now() - started) / 1000).toFixed(1);

const manifest = join(opts.wheels, "wheels.txt");
if (!existsSync(manifest)) fail(`${manifest} is missing: run \`python tests/pyodide/fetch_wheels.py\``);
const wheels = readFileSync(manifest, "utf8").split("\n").filter(Boolean).map((f) => join(opts.wheels, f));
for (const whl of wheels) if (!existsSync(whl)) fail(`${whl} is missing: run \`python tests/pyodide/fetch_wheels.py\``);
if (opts.wheel && !existsSync(opts.wheel)) fail(`${opts.wheel} does not exist`);

const pyodideDir = join(REPO, "node_modules", "pyodide");
if (!existsSync(join(pyodideDir, "pyodide.mjs"))) fail(`${pyodideDir} is missing: run \`npm ci\``);
const { loadPyodide } = await import(pathToFileURL(join(pyodideDir, "pyodide.mjs")).href);

// loadPyodide never settles when the runtime files are broken: give it a deadline.
let timer;
const pyodide = await Promise.race([
  loadPyodide({ indexURL: pyodideDir + "/" }),
  new Promise((_, reject) => { timer = setTimeout(() => reject(new Error("loadPyodide timed out after 120 s")), 120_000); }),
]).catch((err) => fail(err.message));
clearTimeout(timer);

const write = (stream) => ({ write: (buf) => { stream.write(buf); return buf.length; } });
pyodide.setStdout(write(process.stdout));
pyodide.setStderr(write(process.stderr));

const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_path('purelib')").replace(/^\/+/, "/");
for (const whl of wheels) {
  pyodide.unpackArchive(new Uint8Array(readFileSync(whl)), "wheel", { extractDir: sitePackages });
}
if (opts.wheel) {
  pyodide.unpackArchive(new Uint8Array(readFileSync(opts.wheel)), "wheel", { extractDir: sitePackages });
}
pyodide.mountNodeFS(MOUNT, REPO);
process.stdout.write(`run.mjs: Pyodide ${pyodide.version} ready with ${wheels.length} wheels in ${seconds()} s\n`);

const args = [
  "-p", "no:cacheprovider",
  "--rootdir", MOUNT,
  "--confcutdir", `${MOUNT}/tests/unit`, // tests/conftest.py may hold browser-test fixtures
  "--hypothesis-profile", "pyodide",
  "--color", "no",
  "-rfEs",
  ...Object.keys(EXCLUDED).map((f) => `--ignore=${MOUNT}/${f}`),
  `${MOUNT}/tests/unit`,
  ...opts.pytest,
];
for (const [file, why] of Object.entries(EXCLUDED)) process.stdout.write(`run.mjs: excluded ${file}: ${why}\n`);

const globals = pyodide.toPy({
  MOUNT,
  MODE: opts.wheel ? "wheel" : "source",
  WHEEL: opts.wheel ? opts.wheel.split("/").pop() : null,
  SITE_PACKAGES: sitePackages,
  PYODIDE_VERSION: pyodide.version,
  ARGS: args,
});
let code;
try {
  code = pyodide.runPython(`
import errno, os, sys

sys.dont_write_bytecode = True
if "" in sys.path:
    sys.path.remove("")


def _under_repo(path):
    if isinstance(path, int) or path is None:
        return False
    try:
        path = os.path.abspath(os.fsdecode(path))
    except TypeError:
        return False
    return path == MOUNT or path.startswith(MOUNT + "/")


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_WRITE_EVENTS = {"os.mkdir", "os.rmdir", "os.remove", "os.rename", "os.truncate", "os.chmod",
                 "os.chown", "os.utime", "os.symlink", "os.link", "shutil.rmtree"}


def _read_only(event, args):
    """The mounted repository is read-only: refuse every write under /repo."""
    if event == "open":
        path, _mode, flags = args
        if _under_repo(path) and isinstance(flags, int) and flags & _WRITE_FLAGS:
            raise PermissionError(errno.EROFS, "the repository is read-only in this run", path)
    elif event in _WRITE_EVENTS and args and _under_repo(args[0]):
        raise PermissionError(errno.EROFS, "the repository is read-only in this run", args[0])
    elif event == "os.rename" and len(args) > 1 and _under_repo(args[1]):
        raise PermissionError(errno.EROFS, "the repository is read-only in this run", args[1])


sys.addaudithook(_read_only)
os.makedirs("/tmp/hypothesis", exist_ok=True)

# Import calc before pytest touches sys.path, from the place this run is about.
os.chdir("/tmp")
if MODE == "source":
    sys.path.insert(0, MOUNT)
    CALC_ROOT = MOUNT + "/calc/"
else:
    CALC_ROOT = SITE_PACKAGES.rstrip("/") + "/calc/"
import calc  # noqa: E402
os.chdir(MOUNT)

import pytest  # noqa: E402


def _calc_modules():
    return {name: getattr(mod, "__file__", None) or "" for name, mod in list(sys.modules.items())
            if name == "calc" or name.startswith("calc.")}


class PyodideRun:
    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config):
        from hypothesis import configuration, settings
        configuration.set_hypothesis_home_dir("/tmp/hypothesis")
        # No example database (it would live in the read-only repo); no deadlines (wasm is
        # slower than CPython and deadlines would flake); explicit @settings still win.
        settings.register_profile("pyodide", database=None, deadline=None, print_blob=True)

    def pytest_report_header(self, config):
        where = f"wheel {WHEEL}" if WHEEL else "source"
        return [f"pyodide {PYODIDE_VERSION}: Python {sys.version.split()[0]} on {sys.platform}",
                f"calc {getattr(calc, '__version__', '?')} from {calc.__file__} ({where})"]

    def pytest_collection_finish(self, session):
        stray = {n: f for n, f in _calc_modules().items() if f and not f.startswith(CALC_ROOT)}
        if stray:
            pytest.exit(f"calc modules imported from outside {CALC_ROOT}: {stray}", returncode=4)


int(pytest.main(list(ARGS), plugins=[PyodideRun()]))
`, { globals });
} catch (err) {
  fail(`Python raised before pytest could report:\n${err.message}`);
}
process.stdout.write(`run.mjs: pytest exit code ${code}, ${seconds()} s in all\n`);
process.exit(code);
