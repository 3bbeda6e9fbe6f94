// The calculators' worker, started as early as the page allows: ./early.js (inline in the
// page's <head>) starts it, ./page.js takes it over here. It knows no widget and no locale: the
// name comes from the page (messages.workerName of its first widget, written by the build into
// early.js's tag).
//
// On a slow line the page's own styles and scripts take seconds before page.js runs (each
// round trip counts), and the worker's downloads would only start then. ./early.js starts the
// worker from <head> instead, in its "early" mode (messages.earlyName): it fetches the
// manifest and the .wasm, and chooses its boot path, but imports Pyodide's modules and starts
// Python (CPU work that would compete with the page's first paint and start-up) only when
// page.js takes it over (messages.start()). Messages it sends before that are kept and handed
// over in order.

import * as messages from "./messages.js";

const KEY = Symbol.for("calc.early-worker");
const workerURL = new URL("./worker.js", import.meta.url);

// Python starts once the page has loaded (after its `load` event's handlers): Material's own
// start-up (its script and DOMContentLoaded handlers, style and layout passes over the whole
// page) then has the CPU to itself, where on two cores the snapshot's restore and the warm-up
// took a share of it (Lighthouse mobile, fa calculator, 5 interleaved runs: total blocking
// time 143-239 -> 76-156 ms; ready on loopback unchanged, the snapshot's download sets it).
// A file of the page that never finishes (an image) must not hold Python back: at the latest
// START_WAIT_MS after the handover.
const START_WAIT_MS = 1500;
function afterLoad(run) {
  let done = false;
  const once = () => {
    if (!done) setTimeout(run, 0);
    done = true;
  };
  if (document.readyState === "complete") return once();
  addEventListener("load", once, { once: true });
  setTimeout(once, START_WAIT_MS);
}

// From page.js: the early worker of that name, or a new one in the same early mode (no
// early.js ran: an old cached page, a policy that refused it). Call `handOver()` once the
// page's listeners are attached: the kept messages reach them in order, then Python starts
// (once the page has loaded: afterLoad), whichever way the worker was started.
export function takeWorker(name) {
  let early = globalThis[KEY];
  globalThis[KEY] = "taken"; // an early.js that would run after page.js starts none
  if (!early || early.name !== name) {
    if (early && early.worker) early.worker.terminate();
    early = { worker: new Worker(workerURL, { type: "module", name: messages.earlyName(name) }),
              kept: [], keep: null };
  }
  const { worker, kept, keep } = early;
  const handOver = () => {
    if (keep) for (const type of ["message", "error", "messageerror"]) worker.removeEventListener(type, keep);
    for (const event of kept) {
      worker.dispatchEvent(event.type === "message"
        ? new MessageEvent("message", { data: event.data }) : new Event(event.type, { cancelable: true }));
    }
    kept.length = 0;
    afterLoad(() => worker.postMessage(messages.start()));
  };
  return { worker, handOver };
}
