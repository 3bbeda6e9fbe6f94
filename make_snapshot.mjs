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
// and render caches are then in the snapshot.
pyodide.runPython(`
import importlib, gc
importlib.invalidate_caches()
import calc.render
calc.render.prime()
gc.collect()
`);
const snapshot = pyodide.makeMemorySnapshot();

const delta = encode(snapshot, new Uint8Array(readFileSync(path.join(pyodideDir, "pyodide.asm.wasm"))));
writeFileSync(outPath, snapshot);
writeFileSync(outPath + ".json", JSON.stringify(delta) + "\n");
console.log(`snapshot: ${snapshot.length} bytes -> ${outPath} (delta ${delta.from}-${delta.to})`);
