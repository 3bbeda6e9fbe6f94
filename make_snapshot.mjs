// Build-time memory snapshot of Pyodide with `calc` imported and warmed up (build_tables.py
// runs this with Node after copying Pyodide and building the wheel).
//
//   node make_snapshot.mjs PYODIDE_DIR WHEEL OUT
//
// The worker (docs/assets/calc/worker.js) passes the file to loadPyodide({_loadSnapshot}):
// the WebAssembly memory is restored as it was here, so Python's start-up, the import of calc
// and the first calculations are not done again in the reader's browser. Pyodide refuses a
// snapshot of another build (build id check) and the worker then boots the ordinary way.
// The snapshot is the memory only: the files (standard library, the calc wheel) are installed
// again on every load, as usual.
//
// Delta against the WebAssembly's own data (docs/assets/calc/delta.mjs): the range of the
// module's static data is written XORed with its data segments, which the reader has in the
// .wasm already: a smaller download. OUT.json holds the manifest's `snapshot_delta`.
//
// OUT.lite: the standard library for a plain boot on a slow line (worker.js chooses it when the
// .wasm arrives slowly): only the modules this Python has imported by the time calc is imported
// and warmed up, compiled to bytecode here (unchecked hash-based .pyc, PEP 552, by the same
// Python the reader runs), stored uncompressed in one zip (the host compresses the file as a
// whole). Importing from source is most of a plain boot's time; the full python_stdlib.zip
// (sources) replaces it once the calculator is live, for whatever else is imported later.
// The same zip carries calc itself under `site-packages/` (a name no import can match): its
// modules as sourceless bytecode (calc/x.pyc, no calc/x.py needed) and its data files, which
// the worker writes into site-packages, so that a lite boot needs no wheel before the
// calculator is live (the wheel, calc's sources, follows with the standard library).

import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import path from "node:path";
import { encode } from "./docs/assets/calc/delta.mjs";

const [pyodideDir, wheelPath, outPath] = process.argv.slice(2);
if (!pyodideDir || !wheelPath || !outPath) {
  console.error("usage: node make_snapshot.mjs PYODIDE_DIR WHEEL OUT");
  process.exit(2);
}
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const pyodide = await loadPyodide({
  indexURL: path.resolve(pyodideDir) + path.sep,
  _makeSnapshot: true,
  stdout: () => {},
  stderr: (line) => console.error(line),
});
const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
pyodide.unpackArchive(new Uint8Array(readFileSync(wheelPath)), "wheel", { extractDir: sitePackages });
// Import everything the widgets use and run each widget once in every locale
// (calc.render.prime: calc's own lists of widgets and locales): the catalogs, message catalogs
// and render caches are then in the snapshot. All of it lives as long as a page: frozen
// (gc.freeze), so that the worker's collection after the restore walks only what it made
// itself (28 -> 2 ms in the browser, bench/ideas.md).
pyodide.runPython(`
import importlib, gc
importlib.invalidate_caches()
import calc.render
calc.render.prime()
gc.collect()
gc.freeze()
`);
// What the worker runs after the boot too (calc.fields.TRUE_WORDS, the collector): the modules
// from the standard library's archive, read before the snapshot (the list is small garbage).
const imported = JSON.parse(pyodide.runPython(`
import sys, json, calc.fields
json.dumps(sorted({m.__file__ for m in list(sys.modules.values())
                   if getattr(m, "__file__", None) and ".zip/" in m.__file__}))
`));
const snapshot = pyodide.makeMemorySnapshot();

const delta = encode(snapshot, new Uint8Array(readFileSync(path.join(pyodideDir, "pyodide.asm.wasm"))));
writeFileSync(outPath, snapshot);
writeFileSync(outPath + ".json", JSON.stringify(delta) + "\n");
console.log(`snapshot: ${snapshot.length} bytes -> ${outPath} (delta ${delta.from}-${delta.to})`);

// The lite standard library, compiled by the same Python once its memory is copied (the
// snapshot above is a copy: what runs now is not in it).
pyodide.globals.set("FILES", JSON.stringify(imported));
const lite = pyodide.runPython(`
import io, json, os, site, zipfile
from importlib._bootstrap_external import _code_to_hash_pyc

def pyc(source, path):
    # optimize=2 (python -OO): no docstrings and no asserts in the bytecode, 15 % fewer
    # Brotli bytes on the slow line's critical path (1.32 -> 1.12 MB); the standard library
    # supports -OO, and nothing calc runs reads a docstring or relies on an assert.
    code = compile(source, path, "exec", dont_inherit=True, optimize=2)
    return bytes(_code_to_hash_pyc(code, bytes(8), checked=False))

def entry(name):
    return zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))

buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as out:
    for file in json.loads(FILES):
        archive, name = file.split(".zip/", 1)
        with zipfile.ZipFile(archive + ".zip") as src:
            out.writestr(entry(name + "c"), pyc(src.read(name), file))
    packages = site.getsitepackages()[0]
    for folder, dirs, names in os.walk(os.path.join(packages, "calc")):  # top-down, sorted
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                data = f.read()
            target = os.path.relpath(path, packages)
            if name.endswith(".py"):  # sourceless: the module's own place, not __pycache__
                data, target = pyc(data, path), target + "c"
            out.writestr(entry("site-packages/" + target), data)
buf.getvalue()
`).toJs();
writeFileSync(outPath + ".lite", lite);
console.log(`lite standard library: ${imported.length} modules, ${lite.length} bytes`);
