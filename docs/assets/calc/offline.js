// The site's service worker (/sw.js: docs/assets/calc/sw.js as the build writes it), so that
// a second visit is live from the cache and the calculator works offline. page.js calls
// register() once Python is ready (a first visit's downloads never wait for it); it then sends
// the worker the files this page loaded (same origin), to keep for offline use. Where service
// workers are missing or refused (an older browser, a private window, a policy), nothing
// changes: the calculator loads from the network as before.

const root = new URL("../../", import.meta.url);

export function register() {
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
