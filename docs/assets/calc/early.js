// The calculators' worker, started from the first lines of the page's <head>: the build
// (site_build/pages.py, overrides/main.html) writes this file's code into an inline script
// there, right after the Content-Security-Policy (whose hashes cover it), on every page with a
// widget. A classic inline script before the stylesheets runs as soon as the parser reaches
// it: a script file, or any script after a stylesheet, would wait for round trips first, and on
// a mobile line the worker's downloads (the .wasm: the largest file on the way to a live
// calculator) would start up to a second later, while the line is idle.
// The tag carries the worker's name (messages.workerName of the page's first widget) and the
// worker script's address; the worker starts in its early mode (messages.earlyName: the same
// template literal below, checked by tests/unit/test_glue_net.py) and starts Python only when
// page.js has taken it over (./boot.js takeWorker, which reads what this leaves under KEY).
// Its messages until then are kept, in order. Nothing here may be imported: no module is
// fetched before the worker's first requests.
(() => {
  const tag = document.currentScript;
  const KEY = Symbol.for("calc.early-worker");
  if (!tag || globalThis[KEY] || typeof Worker !== "function") return;
  const name = tag.dataset.calcWorker;
  const kept = [];
  const keep = (event) => kept.push(event);
  let worker;
  try {
    worker = new Worker(new URL(tag.dataset.calcSrc, document.baseURI),
                        { type: "module", name: `${name} early` });
  } catch {
    return; // page.js tries again and reports it
  }
  for (const type of ["message", "error", "messageerror"]) worker.addEventListener(type, keep);
  globalThis[KEY] = { name, worker, kept, keep };
})();
