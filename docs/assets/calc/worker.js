// Module Web Worker: loads Pyodide and the `calc` wheel from this site (no CDN), then answers
// the page's requests with `calc.render.results(...)`.
//
// Messages to the page:
//   {type: "status", stage: "runtime" | "package" | "ready"}
//   {type: "error", stage, detail}            Python could not be loaded (fatal)
//   {type: "result", id, result}              result = {html, errors, query, form, ...}
//   {type: "failure", id, detail}             one request raised (should never happen)
// Messages from the page:
//   {id, name, query, locale}                 query: {field: string}
//
// All paths are relative to this file: ../pyodide/ holds the runtime, ./manifest.json names
// the wheel (written by the site build next to the wheel).

const here = new URL(".", import.meta.url);
const pyodideBase = new URL("../pyodide/", here);
const manifestURL = new URL("manifest.json", here);

const post = (message) => self.postMessage(message);

function describe(err) {
  return String((err && (err.message || err.name)) || err).slice(0, 500);
}

async function fetchOk(url, what) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${what}: HTTP ${response.status} for ${url}`);
  return response;
}

// The wheel is fetched while the runtime boots.
async function fetchWheel() {
  const manifest = await (await fetchOk(manifestURL, "manifest")).json();
  const file = manifest.wheel || manifest.file || manifest.name;
  if (typeof file !== "string" || !file.endsWith(".whl")) {
    throw new Error("manifest.json names no wheel");
  }
  const url = new URL(file, manifestURL);
  const buffer = await (await fetchOk(url, "wheel")).arrayBuffer();
  // The manifest's checksum catches a stale or truncated wheel (crypto.subtle exists only in
  // secure contexts: https and localhost).
  if (typeof manifest.sha256 === "string" && self.crypto && crypto.subtle) {
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", buffer));
    const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
    if (hex !== manifest.sha256.toLowerCase()) throw new Error(`wheel: checksum mismatch for ${url}`);
  }
  return buffer;
}

// loadPyodide never settles when the .wasm is missing, blocked or served with a wrong MIME
// type: check it (a HEAD request, in parallel), so the page can say so at once instead of
// waiting for its timeout.
async function checkWasm() {
  if (typeof WebAssembly !== "object") throw new Error("WebAssembly is not available");
  const url = new URL("pyodide.asm.wasm", pyodideBase);
  const response = await fetch(url, { method: "HEAD" });
  await response.arrayBuffer(); // empty; read to the end so the request completes normally
  const type = response.headers.get("content-type") || "";
  if (!response.ok) throw new Error(`runtime: HTTP ${response.status} for ${url}`);
  if (!type.includes("application/wasm")) throw new Error(`runtime: ${url} is served as ${type}`);
}

let stage = "runtime";
let reported = false;
const report = (err) => {
  if (reported) return;
  reported = true;
  post({ type: "error", stage, detail: describe(err) });
};
// Pyodide's own loader can fail inside promises nobody awaits: report those too.
self.addEventListener("unhandledrejection", (event) => {
  event.preventDefault();
  if (stage !== "ready") report(event.reason);
});

const ready = (async () => {
  post({ type: "status", stage: "runtime" });
  const wheel = fetchWheel();
  wheel.catch(report); // at once: no need to wait for the runtime to say the wheel is missing
  checkWasm().catch(report); // beside the runtime's own download, which would only hang
  const { loadPyodide } = await import(new URL("pyodide.mjs", pyodideBase).href);
  const pyodide = await loadPyodide({
    indexURL: pyodideBase.href,
    stdout: () => {},
    stderr: () => {},
  });
  stage = "package";
  post({ type: "status", stage: "package" });
  const buffer = await wheel;
  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  pyodide.unpackArchive(buffer, "wheel", { extractDir: sitePackages });
  pyodide.runPython("import importlib; importlib.invalidate_caches()");
  const render = pyodide.pyimport("calc.render");
  const resultsJson = render.results_json;
  // Warm up: the first call loads the catalogs, so the first edit is instant.
  resultsJson("calculator", "{}", "en");
  stage = "ready";
  post({ type: "status", stage: "ready" });
  return resultsJson;
})();

ready.catch(report);

self.onmessage = async (event) => {
  const { id, name, query, locale } = event.data || {};
  let resultsJson;
  try {
    resultsJson = await ready;
  } catch {
    return; // already reported
  }
  try {
    const text = resultsJson(String(name), JSON.stringify(query || {}), String(locale || "en"));
    post({ type: "result", id, result: JSON.parse(text) });
  } catch (err) {
    post({ type: "failure", id, detail: describe(err) });
  }
};
