// The calculators' worker (imported by ./worker.js, its first file, which has requested the
// .wasm and the manifest already): loads Pyodide and the `calc` wheel from this site (no CDN),
// then answers the page's requests with `calc.render.results_json(...)`. It knows no widget and
// no locale: it runs whatever the page asks for.
//
// The messages it exchanges with the page are written down, and built, in ./messages.js. Its
// name (new Worker(url, {name})) names the page's first widget and locale: what to warm up
// before READY (below).
//
// All paths are relative to this file: ../pyodide/ holds the runtime, ./manifest.json names
// the wheel and the memory snapshot (written by the site build next to them).
//
// The snapshot (make_snapshot.mjs, at build time) is Pyodide's memory with calc imported and
// warmed up: restoring it skips Python's start-up and the imports. When there is none, or it
// cannot be fetched or restored (wrong size, another Pyodide build, a delta that does not
// match: snapshotBoot below), Python boots the ordinary way.
//
// Downloads (./net.js): every response body read here, Pyodide's too, is counted as it
// arrives and reported (messages.progress), so the page's guard waits for bytes that stop
// arriving, not for a slow line; a body cut short or a file of the wrong size (the manifest's
// `files`) is reported at once as a network fault. With the snapshot, Python's standard
// library (python_stdlib.zip) is not on the way to READY: everything calc imports is in the
// snapshot's memory already, so Pyodide gets an empty archive and the real one is fetched
// after READY (a request that needs it meanwhile waits for it: `laterFilesReady`). The same
// goes for the wheel, with the snapshot (calc is in its memory) and with the lite boot (calc's
// bytecode and data files are in the lite archive): it is fetched before READY only for an
// ordinary boot, and otherwise installed after READY, for calc's sources and whatever the
// snapshot did not read.
//
// Snapshot or lite boot, by the line: the .wasm is needed either way and is fetched first, at
// once (downloads.prefetch); how fast its first bytes come (the manifest's `boot`: the rate
// over `decide_ms`, against `lite_below` bytes per second) chooses. A fast line (or a cache)
// restores the snapshot; a slow one boots Python the ordinary way but from the lite standard
// library (`stdlib_lite`: only the modules calc needs, precompiled: make_snapshot.mjs), which
// moves about 2.5 MB less and costs about a second more of CPU. When the lite boot fails,
// Python boots from the full standard library.

import * as messages from "./messages.js";
import { Downloads } from "./net.js";
import { decode } from "./delta.mjs";

const { STAGE, CAUSE } = messages;
const here = new URL(".", import.meta.url);
const pyodideBase = new URL("../pyodide/", here);
const manifestURL = new URL("manifest.json", here);
const stdlibURL = new URL("python_stdlib.zip", pyodideBase);
const wasmURL = new URL("pyodide.asm.wasm", pyodideBase);

// What ./worker.js started before importing this module: its two requests, and the page's
// messages that came meanwhile (answered in order once onmessage is set, at the end).
const early = globalThis[Symbol.for("calc.worker.early")] || { requests: new Map(), kept: [] };

const post = (message) => self.postMessage(message);
// A cut download is a network fault, but for the snapshot or the lite standard library: then
// Python boots the ordinary way.
const fallbackURLs = new Set();
const downloads = new Downloads(self, post, (err, url) => {
  if (!(url && fallbackURLs.has(url.href))) report(err, CAUSE.NETWORK);
});
// The .wasm at once (its bytes kept for the snapshot's delta until the boot path is chosen).
downloads.keep(wasmURL.href);
downloads.prefetch(wasmURL.href, early.requests.get(wasmURL.href));

function describe(err) {
  return String((err && (err.message || err.name)) || err).slice(0, 500);
}

// `started`: the request ./worker.js made already for that URL, if any.
async function fetchOk(url, what, started = null) {
  const response = await (started ? started.response : fetch(url));
  if (!response.ok) throw new Error(`${what}: HTTP ${response.status} for ${url}`);
  return response;
}

const manifestPromise = (async () => (await fetchOk(
  manifestURL, "manifest", early.requests.get(manifestURL.href))).json())();
// The sizes to check, as soon as the manifest is there: before the wheel's request starts
// (the continuation below is registered later).
manifestPromise.then((m) => downloads.expect(m, manifestURL, bootPath(m)), () => {});

// The snapshot's size as the manifest gives it (0: not given).
function snapshotSize(manifest) {
  const size = manifest.snapshot_size;
  return Number.isInteger(size) && size > 0 ? size : 0;
}

// "snapshot", "lite" or "plain" (no snapshot, or none of a known size: the snapshot path needs
// it before the bytes come, snapshotBoot), for the .wasm's measured rate (bytes per second).
function bootPath(manifest, rate = Infinity) {
  if (typeof manifest.snapshot !== "string" || !snapshotSize(manifest)) return "plain";
  const below = (manifest.boot || {}).lite_below;
  return typeof manifest.stdlib_lite === "string" && rate < below ? "lite" : "snapshot";
}

// The wheel is fetched while the runtime boots.
async function fetchWheel() {
  const manifest = await manifestPromise;
  const file = manifest.wheel;
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
  // The smallest module (magic number and version): compiling it throws at once where a
  // policy forbids WebAssembly (a Content-Security-Policy without 'wasm-unsafe-eval', a
  // hardened browser), where Pyodide would only log a warning and wait forever.
  new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
  const url = new URL("pyodide.asm.wasm", pyodideBase);
  const response = await fetch(url, { method: "HEAD" });
  await response.arrayBuffer(); // empty; read to the end so the request completes normally
  const type = response.headers.get("content-type") || "";
  if (!response.ok) throw new Error(`runtime: HTTP ${response.status} for ${url}`);
  if (!type.includes("application/wasm")) throw new Error(`runtime: ${url} is served as ${type}`);
}

// The snapshot's bytes, checked against the manifest's size (a truncated download). Read chunk
// by chunk into one buffer of that size: no second copy of its 30 MB at the end (the worker's
// thread reads the body while it makes Pyodide's module: snapshotBoot).
async function fetchSnapshot(manifest) {
  const url = new URL(manifest.snapshot, manifestURL);
  fallbackURLs.add(url.href);
  const response = await fetchOk(url, "snapshot");
  const size = snapshotSize(manifest);
  const bytes = new Uint8Array(size);
  const reader = response.body.getReader();
  let at = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (at + value.byteLength > size) {
      reader.cancel();
      throw new Error(`snapshot: more than the ${size} bytes expected`);
    }
    bytes.set(value, at);
    at += value.byteLength;
  }
  if (at !== size) throw new Error(`snapshot: ${at} bytes, expected ${size}`);
  return bytes;
}

// Pyodide's module made while the snapshot downloads. loadPyodide awaits `_loadSnapshot` before
// it makes the module (the snapshot's length is the module's initial memory), and making it (the
// .wasm compiled and instantiated, the runtime's JavaScript set up) took 160-200 ms after the
// snapshot's last byte (bench/ideas.md). The manifest gives the length: loadPyodide gets a
// stand-in of that length at once (zeros that the system gives lazily: no page of it is ever
// touched), and the module waits for the real bytes only once it is made, just before the
// restore. Pyodide keeps its options for the page's lifetime (Module.API.config, with
// `_loadSnapshot`): it kept the 30 MB of the real bytes that way, and keeps only the untouched
// stand-in now (the real bytes are referenced from nowhere once restored).
//
// The snapshot's delta (./delta.mjs): its range of the module's static data was written XORed
// with the .wasm's data segments; undone just before Pyodide restores the memory, from the
// .wasm's bytes as they arrived (downloads.keep). When they are not there or the check fails,
// this throws there and Python boots the ordinary way.
function snapshotBoot(createModule, snapshot, manifest) {
  const delta = manifest.snapshot_delta;
  const xor = delta && delta.to > delta.from;
  let pending = snapshot;
  const create = async (settings) => {
    const Module = await createModule(settings);
    let real = await pending;
    pending = null;
    const api = Module.API;
    const restore = api.restoreSnapshot;
    api.restoreSnapshot = () => { // not the stand-in Pyodide passes: the real bytes
      const bytes = real;
      real = null;
      api.restoreSnapshot = restore;
      if (xor) {
        const wasm = downloads.kept(wasmURL.href);
        if (!wasm) throw new Error("snapshot: the runtime's bytes were not kept");
        decode(bytes, wasm, delta);
      }
      return restore.call(api, bytes);
    };
    return Module;
  };
  return { createPyodideModule: create, _loadSnapshot: new Uint8Array(snapshotSize(manifest)) };
}

// After a lite boot: calc's bytecode (sourceless .pyc) and data files, from the lite archive's
// `site-packages/` entries (make_snapshot.mjs) into site-packages, before the wheel is there.
let liteBoot = false;
const CALC_BYTECODE = `
import os, site, sys, zipfile
packages = site.getsitepackages()[0]
with zipfile.ZipFile(next(p for p in sys.path if p.endswith(".zip"))) as z:
    for name in z.namelist():
        if name.startswith("site-packages/"):
            target = os.path.join(packages, name[len("site-packages/"):])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(z.read(name))
`;

// Started from the page's <head> (boot.js): Python waits for the page's start() message.
let startNow = null;
const started = messages.readWorkerName(self.name).early
  ? new Promise((resolve) => { startNow = resolve; }) : Promise.resolve();

let stage = STAGE.RUNTIME;
let reported = false;
let tryingFast = false; // the snapshot or the lite boot: a failure falls back to the plain one
const report = (err, cause = CAUSE.LOAD) => {
  if (reported) return;
  reported = true;
  downloads.stop();
  post(messages.error(stage, describe(err), cause));
};
// Pyodide's own loader can fail inside promises nobody awaits: report those too.
self.addEventListener("unhandledrejection", (event) => {
  event.preventDefault();
  if (stage !== STAGE.READY && !tryingFast) report(event.reason);
});

// The standard library and the wheel, once Python runs from the snapshot or the lite archive:
// fetched after READY (or at once by a request that needs a module or a file the boot did not
// bring) and put where Pyodide puts them.
let pyodideRef = null;
let deferredStdlib = false;
let deferredWheel = false;
let laterPromise = null;
function laterFilesReady() {
  if (!deferredStdlib && !deferredWheel) return Promise.resolve();
  laterPromise ??= (async () => {
    const [stdlib, wheel] = await Promise.all([
      deferredStdlib ? fetchOk(stdlibURL, "stdlib").then((r) => r.arrayBuffer()) : null,
      deferredWheel ? fetchWheel() : null]);
    if (stdlib) {
      const FS = pyodideRef.FS;
      const name = FS.readdir("/lib").find((n) => /^python[0-9]+\.zip$/.test(n));
      FS.writeFile(`/lib/${name}`, new Uint8Array(stdlib));
    }
    if (wheel) installWheel(pyodideRef, wheel);
    pyodideRef.runPython("import importlib; importlib.invalidate_caches()");
    deferredStdlib = false;
    deferredWheel = false;
  })();
  return laterPromise;
}

function installWheel(pyodide, buffer) {
  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  pyodide.unpackArchive(buffer, "wheel", { extractDir: sitePackages });
}

const ready = (async () => {
  post(messages.status(STAGE.RUNTIME));
  checkWasm().catch(report); // beside the runtime's own download, which would only hang
  const manifest = await manifestPromise.catch(() => ({}));
  let pyodide = null;
  let restored = false;
  const choice = bootPath(manifest, 0) === "lite"; // else there is nothing to choose
  const path = bootPath(manifest, choice
    ? await downloads.rate(wasmURL.href, (manifest.boot || {}).decide_ms || 0) : Infinity);
  downloads.expect(manifest, manifestURL, path);
  if (path !== "snapshot" || !manifest.snapshot_delta) downloads.keep(null);
  // The wheel before READY for an ordinary boot only (see the top of this file).
  let wheel = null;
  const needWheel = () => {
    wheel ??= fetchWheel();
    wheel.catch(report); // at once: no need to wait for the runtime to say it is missing
  };
  if (path === "plain") needWheel();
  tryingFast = path !== "plain";
  // The lite archive now (a slow line: every second of download counts); the snapshot (a fast
  // line: it comes quickly) and Python itself once the page says so (an early worker), so that
  // reading its 30 MB does not compete with the page's first paint.
  const snapshot = path === "snapshot" ? started.then(() => fetchSnapshot(manifest)) : null;
  snapshot?.catch(() => {}); // its failure is the snapshot restore's, below
  const liteURL = path === "lite" ? new URL(manifest.stdlib_lite, manifestURL) : null;
  if (liteURL) {
    fallbackURLs.add(liteURL.href);
    downloads.prefetch(liteURL.href);
  }
  await started;
  // Pyodide's two modules (1.2 MB of JavaScript to parse) only now, both at once (Pyodide
  // would import the second only after the first): before the page's `load` they took the
  // CPU from its start-up, and Lighthouse counted them as blocking its first paint
  // (bench/ideas.md); the snapshot's download, requested at the same moment, takes longer.
  const asm = import(new URL("pyodide.asm.mjs", pyodideBase).href);
  asm.then(() => downloads.arrived("../pyodide/pyodide.asm.mjs"), () => {});
  const [{ loadPyodide }, { default: createPyodideModule }] = await Promise.all([
    import(new URL("pyodide.mjs", pyodideBase).href), asm]);
  downloads.arrived("../pyodide/pyodide.mjs");
  const options = { indexURL: pyodideBase.href, stdout: () => {}, stderr: () => {},
                    createPyodideModule };
  if (path === "snapshot") {
    try {
      pyodide = await loadPyodide({
        ...options, ...snapshotBoot(createPyodideModule, snapshot, manifest),
        stdLibURL: downloads.emptyZipURL(stdlibURL).href });
      restored = true;
      deferredStdlib = true;
    } catch {
      pyodide = null; // boot the ordinary way below
    }
  } else if (liteURL) {
    try {
      pyodide = await loadPyodide({ ...options, stdLibURL: liteURL.href });
      deferredStdlib = true;
      liteBoot = true;
    } catch {
      pyodide = null;
    }
  }
  tryingFast = false;
  downloads.keep(null); // the .wasm's bytes are not needed any more
  if (!pyodide) {
    downloads.expect(manifest, manifestURL, "plain");
    needWheel();
    pyodide = await loadPyodide(options);
  }
  pyodideRef = pyodide;
  stage = STAGE.PACKAGE;
  post(messages.status(STAGE.PACKAGE));
  if (wheel) installWheel(pyodide, await wheel);
  else deferredWheel = true;
  if (liteBoot) pyodide.runPython(CALC_BYTECODE); // calc without its wheel (make_snapshot.mjs)
  pyodide.runPython("import importlib; importlib.invalidate_caches()");
  const render = pyodide.pyimport("calc.render");
  const resultsJson = render.results_json;
  // What the page's yes/no fields read as yes (calc.fields.TRUE_WORDS), told at READY.
  const truthy = JSON.parse(
    pyodide.runPython("import json, calc.fields; json.dumps(calc.fields.TRUE_WORDS)"));
  const { widget, locale } = messages.readWorkerName(self.name);
  // Warm up: the first call loads the catalogs, so the first edit is instant.
  try {
    if (widget) resultsJson(widget, "{}", locale);
  } catch {} // a name calc does not know: the page's first request will say so
  // Everything allocated so far lives as long as the page: out of the collector's way, so
  // that no full collection walks it in the middle of an edit (the snapshot's own objects
  // are frozen already: make_snapshot.mjs).
  pyodide.runPython("import gc; gc.collect(); gc.freeze()");
  warmQueries = render.warm_queries;
  // Booted without the snapshot, importing calc has warmed Python up already.
  if (restored && widget && locale) {
    try {
      warm = warmer(resultsJson, widget, locale);
      const until = performance.now() + WARM_MS;
      while (warm && performance.now() < until) warm = warm() && warm;
    } catch {
      warm = null; // a warm-up is never needed: answer as usual
    }
  }
  stage = STAGE.READY;
  downloads.stop();
  post(messages.status(STAGE.READY, truthy));
  return resultsJson;
})();

// After READY: the standard library and the wheel, for whatever the boot did not bring (not
// needed for calc's own calculations; a failure here is told only to a request that needs it).
ready.then(() => setTimeout(() => laterFilesReady().catch(() => {}), 0), () => {});

ready.catch(report);

// Warm-up. V8 runs WebAssembly in its baseline tier (Liftoff) first and compiles a function with
// its optimizing tier (TurboFan) only once that function has done enough work. The snapshot
// restores Python's memory, not compiled code, so Python starts cold: an edit took p50 4-6 ms,
// p95 13-20 ms in the worker for the reader's first 40-60 edits, against about 3 and 6-9 ms
// after this warm-up (bench/ideas.md). Repeating one calculation does not help: it only hits
// render's memoized pieces, while an edit misses them. So the warm-up calculates new states of
// the page's widget in its locale, as edits make them (calc.render.warm_queries), results
// thrown away. Before READY, for at most WARM_MS (a slow device does not wait for all of
// it); whatever is left after the first answer, one run per task (a MessageChannel message: a
// reader's message waits for one run at most).
const WARM_MS = 800;
let warm = null; // the next warm-up run (returns false after the last), false once done
let warmQueries = null; // calc.render.warm_queries: the new states to calculate

function warmer(resultsJson, widget, locale) {
  const queries = JSON.parse(warmQueries(widget, locale));
  let run = 0;
  return () => {
    if (run >= queries.length) return false;
    resultsJson(widget, queries[run++], locale);
    return true;
  };
}

let warmStarted = false;
function warmRest(resultsJson, [widget, , locale]) {
  if (warmStarted) return;
  warmStarted = true;
  // no name (an older page script): warm up from the first request instead
  try {
    if (warm === null) warm = warmer(resultsJson, widget, locale);
  } catch {
    warm = false;
  }
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    try {
      if (warm && warm()) return channel.port2.postMessage(0);
    } catch {}
    warm = false;
    channel.port1.close();
  };
  channel.port2.postMessage(0);
}

self.onmessage = async (event) => {
  if (event.data && event.data.type === messages.TYPE.START) return startNow && startNow();
  const { id, name, query, locale } = event.data || {};
  let resultsJson;
  try {
    resultsJson = await ready;
  } catch {
    return; // already reported
  }
  const args = [String(name), JSON.stringify(query || {}), String(locale ?? "")];
  try {
    let text;
    try {
      text = resultsJson(...args);
    } catch (err) {
      if (!deferredStdlib && !deferredWheel) throw err;
      await laterFilesReady(); // a module or file the boot lacks: with them, again
      text = resultsJson(...args);
    }
    post(messages.result(id, JSON.parse(text)));
    warmRest(resultsJson, args);
  } catch (err) {
    // This input failed, or Python itself is broken (after a fatal error every call fails):
    // the same widget's default calculation tells which. Broken is fatal, as a crash of the
    // worker is.
    let alive = true;
    try {
      resultsJson(args[0], "{}", args[2]);
    } catch {
      alive = false;
    }
    if (alive) post(messages.failure(id, describe(err)));
    else post(messages.error(STAGE.CRASHED, describe(err)));
  }
};

// The page's messages that came before this module ran, in order.
for (const event of early.kept.splice(0)) self.onmessage(event);
