"""The JavaScript and HTML the benchmark puts into the pages it measures (bench.py, ab.py):
what every page records before its own scripts run, the bare Pyodide boot page and its
worker, and one timed edit."""

# Recorded in every page before its scripts run: paints, LCP, and when the widget is ready.
INIT_JS = r"""
(() => {
  const m = (window.__bench = { fcp: null, lcp: null, lcpTag: null, ready: null, first: null,
                                resultsAtFcp: null });
  const results = () => {
    const el = document.querySelector('[data-calc-results]');
    if (!el) return null;
    const cs = getComputedStyle(el);
    const r = el.getBoundingClientRect();
    return { text: el.textContent.trim().length, display: cs.display, visibility: cs.visibility,
             opacity: cs.opacity, width: r.width, height: r.height, top: r.top,
             inViewport: r.top < innerHeight && r.bottom > 0,
             figures: el.querySelectorAll('[data-calc]').length };
  };
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (e.name === 'first-contentful-paint' && m.fcp === null) {
          m.fcp = e.startTime;
          m.resultsAtFcp = results();
        }
      }
    }).observe({ type: 'paint', buffered: true });
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        m.lcp = e.startTime;
        m.lcpTag = e.element ? (e.element.closest('[data-calc-results]') ? 'results' :
                                e.element.tagName.toLowerCase()) : null;
      }
    }).observe({ type: 'largest-contentful-paint', buffered: true });
  } catch (e) {}
  new MutationObserver(() => {
    const root = document.querySelector('[data-calc-widget]') || document.documentElement;
    if (m.ready === null && root.dataset.state === 'ready') m.ready = performance.now();
    if (m.first === null && root.dataset.state === 'ready' && root.dataset.busy === 'false'
        && root !== document.documentElement) m.first = performance.now();
    if (root === document.documentElement && root.dataset.state === 'ready' && m.first === null)
      m.first = m.ready;
  }).observe(document, { attributes: true, subtree: true,
                         attributeFilter: ['data-state', 'data-busy'] });
})();
"""

BARE_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>bare Pyodide boot</title>
<meta name="viewport" content="width=device-width,initial-scale=1"></head>
<body><p>Bare Pyodide boot (benchmark)</p>
<script type="module" src="bare.js"></script></body></html>
"""
BARE_JS = """// The bare boot: loadPyodide in a module worker on the site's own runtime files, nothing else.
const worker = new Worker(new URL("./bare-worker.js", import.meta.url), { type: "module" });
worker.onmessage = (event) => {
  document.documentElement.dataset.detail = String(event.data);
  document.documentElement.dataset.state = event.data === "ready" ? "ready" : "error";
};
"""
BARE_WORKER_JS = """const base = new URL("../pyodide/", import.meta.url).href;
try {
  const { loadPyodide } = await import(base + "pyodide.mjs");
  await loadPyodide({ indexURL: base, stdout: () => {}, stderr: () => {} });
  self.postMessage("ready");
} catch (err) {
  self.postMessage("error: " + err);
}
"""

# One edit: set a field, fire `input`; timed until the results region changes (the new figures
# are in the DOM), then until the next frame has run (they are painted). Then wait until the
# widget is idle (data-busy="false": the address bar follows after the paint).
EDIT_JS = r"""
async ([name, value]) => {
  const root = document.querySelector('[data-calc-widget="calculator"]');
  const results = root.querySelector('[data-calc-results]');
  const el = root.querySelector(`[name="${name}"]`);
  let t0 = 0;
  const changed = new Promise((resolve) => {
    const obs = new MutationObserver(() => { obs.disconnect(); resolve(performance.now()); });
    obs.observe(results, { childList: true, subtree: true, characterData: true });
    const idle = new MutationObserver(() => {
      if (root.dataset.busy === 'false') { idle.disconnect(); resolve(performance.now()); }
    });
    idle.observe(root, { attributes: true, attributeFilter: ['data-busy'] });
  });
  const idle = () => new Promise((resolve) => {
    if (root.dataset.busy === 'false') return resolve();
    const obs = new MutationObserver(() => {
      if (root.dataset.busy === 'false') { obs.disconnect(); resolve(); }
    });
    obs.observe(root, { attributes: true, attributeFilter: ['data-busy'] });
  });
  t0 = performance.now();
  if (el.type === 'checkbox') el.checked = !el.checked;
  else el.value = value;
  el.dispatchEvent(new Event('input', { bubbles: true }));
  const dom = await changed;
  const frame = await new Promise((resolve) =>
    requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0)));
  await idle();
  return [dom - t0, frame - t0];
}
"""
