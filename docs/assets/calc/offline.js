// The site's service worker (/sw.js: docs/assets/calc/sw.js as the build writes it), so that
// a second visit is live from the cache and the calculator works offline. page.js calls
// whenQuiet() once Python is ready (a first visit's downloads never wait for it) and its poke on
// each request; the worker is registered once the calculator has had no request for QUIET_MS.
// Its install copies the runtime (about 10 MB) from the HTTP cache into its own, and on two
// cores that work, begun at ready, slowed the edits a reader makes right after it
// (bench/ideas.md: edit p95 31.4 -> 20.0 ms, warm ready 2976 -> 2588 ms). The page then sends
// the worker the files it loaded (same origin), to keep for offline use. Where service
// workers are missing or refused (an older browser, a private window, a policy), nothing
// changes: the calculator loads from the network as before.

const root = new URL("../../", import.meta.url);
const QUIET_MS = 3000;

// register() after QUIET_MS without a call of the returned poke (once, then poke does nothing).
export function whenQuiet() {
  let timer = null;
  let done = false;
  const poke = () => {
    if (done) return;
    clearTimeout(timer);
    timer = setTimeout(() => ((done = true), register()), QUIET_MS);
  };
  poke();
  return poke;
}

function register() {
  if (!("serviceWorker" in navigator) || !window.isSecureContext) return;
  navigator.serviceWorker.register(new URL("sw.js", root), { scope: root.href })
    .then(() => navigator.serviceWorker.ready)
    .then((registration) => {
      const urls = performance.getEntriesByType("resource").map((e) => e.name)
        .filter((u) => u.startsWith(root.href));
      registration.active?.postMessage({ cache: [window.location.href, ...urls] });
    })
    .catch(() => {});
}
