// The site's service worker: a second visit to a calculator is live from the cache, and the
// calculator works offline. The build (site_build/runtime.py) writes it to the site's root as
// /sw.js (scope: the whole site), with the line below replaced by this build's id and the
// files of its runtime; page.js registers it on pages with a widget once Python is ready, so a
// first visit's downloads never pass through it.
//
// Two caches, both named by the build (a new build: new caches, the old ones deleted when the
// new worker takes over):
// - calc-runtime-BUILD: Pyodide's files, the calc wheel, the snapshot and the manifest
//   (BUILD.runtime), fetched at install. Served cache-first (the manifest network-first), but
//   only while the server's manifest.json names this build (fetched once after each
//   navigation, by the first runtime request: in the moment a new build is on the server and
//   this worker not yet replaced, the network answers, never a mix of two builds' files).
// - calc-pages-BUILD: the pages and their own files (styles, scripts, fonts): the calculator's
//   scripts (BUILD.scripts) at install, every page fetched through here, and the files a page
//   loaded, which page.js sends (message {cache: [url...]}). Pages are network-first: the cache answers only when the network
//   does not (offline, a server down). Other files go to the network untouched (no
//   respondWith) unless the last navigation fell back to the cache: then the cache answers
//   first for them too.

const BUILD = { id: "dev", runtime: [], scripts: [] }; // replaced by the build

const PREFIX = "calc-";
const RUNTIME = `${PREFIX}runtime-${BUILD.id}`;
const PAGES = `${PREFIX}pages-${BUILD.id}`;
const scope = new URL(self.registration.scope);
const manifestURL = new URL("assets/calc/manifest.json", scope).href;
const runtime = new Set(BUILD.runtime.map((path) => new URL(path, scope).href));

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    // One request at a time: the browser's HTTP cache answers most (revalidated, 304).
    const fill = async (name, urls) => {
      const cache = await caches.open(name);
      for (const url of urls) {
        if (!(await cache.match(url))) await cache.add(new Request(url, { cache: "no-cache" }));
      }
    };
    await fill(RUNTIME, runtime);
    await fill(PAGES, BUILD.scripts.map((path) => new URL(path, scope).href));
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith(PREFIX) && name !== RUNTIME && name !== PAGES) await caches.delete(name);
    }
    await self.clients.claim();
    // the pages open now (the one that registered this worker among them)
    const pages = await caches.open(PAGES);
    for (const client of await self.clients.matchAll({ type: "window" })) {
      await pages.add(client.url).catch(() => {});
    }
  })());
});

// This build's cache, or null when it is gone: outside install, a worker never creates one.
// A worker replaced by a new build still answers the requests already given to it; opening its
// deleted cache then would create it again, and nothing would ever delete that copy.
async function ours(name) {
  return (await caches.has(name)) ? caches.open(name) : null;
}

// A page's own files (page.js: performance.getEntriesByType("resource")), same origin only.
self.addEventListener("message", (event) => {
  const urls = (event.data && event.data.cache) || [];
  event.waitUntil((async () => {
    const pages = await ours(PAGES);
    if (!pages) return;
    for (const href of urls) {
      const url = new URL(String(href), scope);
      if (url.origin !== scope.origin || runtime.has(url.href)) continue;
      if (!(await pages.match(url.href))) await pages.add(url.href).catch(() => {});
    }
  })());
});

// Whether the server's manifest names this build: fetched once per navigation.
let sameBuild = null;
function checkBuild() {
  sameBuild ??= fetch(manifestURL, { cache: "no-cache" })
    .then((r) => (r.ok ? r.json() : null))
    .then((m) => {
      const same = !m || m.build === BUILD.id;
      if (!same) self.registration.update().catch(() => {});
      return same;
    }, () => true); // offline: this build's files are all there is
  return sameBuild;
}

let offline = false; // the last navigation was answered by the cache

async function page(request) {
  const pages = await ours(PAGES);
  try {
    const response = await fetch(request);
    offline = false;
    if (response.ok && pages) await pages.put(request, response.clone());
    return response;
  } catch (err) {
    const hit = pages && await pages.match(request, { ignoreSearch: true });
    if (!hit) throw err;
    offline = true;
    return hit;
  }
}

async function fromRuntime(request) {
  const cache = await ours(RUNTIME);
  const url = request.url.split("?")[0];
  if (cache && url !== manifestURL && (await checkBuild())) {
    const hit = await cache.match(url);
    if (hit) return request.method === "HEAD" ? headOf(hit) : hit;
  }
  try {
    return await fetch(request);
  } catch (err) {
    const hit = cache && await cache.match(url);
    if (!hit) throw err;
    return request.method === "HEAD" ? headOf(hit) : hit;
  }
}

const headOf = (response) => new Response(null, {
  status: response.status, statusText: response.statusText, headers: response.headers });

async function cacheFirst(request) {
  const hit = (await caches.match(request, { ignoreSearch: true }));
  return hit || fetch(request);
}

self.addEventListener("fetch", (event) => {
  const { request } = event;
  if (request.method !== "GET" && request.method !== "HEAD") return;
  const url = new URL(request.url);
  if (url.origin !== scope.origin) return;
  if (request.mode === "navigate") {
    sameBuild = null;
    event.respondWith(page(request));
  } else if (runtime.has(url.origin + url.pathname)) {
    event.respondWith(fromRuntime(request));
  } else if (offline && request.method === "GET") {
    event.respondWith(cacheFirst(request));
  }
});
