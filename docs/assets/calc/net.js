// The worker's downloads, counted as their bytes arrive (imported by ./worker-python.js only).
//
// new Downloads(scope, post, onCut) replaces scope.fetch with a fetch that passes every
// response body through a counter, so Pyodide's own downloads (the .wasm, the lock file, the
// standard library) are counted as the worker's are. While loading:
// - every chunk adds to `loaded`; messages.progress(loaded, total) is posted at most every
//   PROGRESS_MS (and at the end of each file), so the page's guard sees bytes arriving;
// - a body that fails half-way (the connection cut) or ends at another size than the manifest
//   says (`files`: {path relative to manifest.json: bytes}) calls onCut(error) and errors the
//   body, so whoever reads it fails too instead of waiting;
// - emptyZipURL(url) is answered here, without the network, with an empty zip archive (what
//   Pyodide gets as its standard library when Python runs from the snapshot, worker-python.js).
// expect(manifest, manifestURL, path) sets the total: the sizes of the files that boot path
// downloads ("snapshot": the snapshot, no standard library and no wheel; "lite": the lite
// standard library, no wheel; "plain": the standard library and the wheel; worker-python.js).
// arrived(path) counts a file fetched by import() (the runtime's modules), which no fetch sees.
// stop() ends the counting (READY, or a fault): later responses pass untouched.
// keep(href) keeps the body of the next response for that URL as it arrives (the .wasm's bytes,
// for the snapshot's delta: worker-python.js); kept(href) returns it once complete (else null);
// keep(null) lets it go.
// prefetch(href, started) fetches it at once (or takes over `started`, a request made before
// this module was imported: {response, at}, ./worker.js) and reads its body as it arrives
// (counted, kept), so that rate(href, ms) can tell how fast it comes before anyone asks for it:
// the bytes per second from its first chunk (from the taken-over response's headers: its first
// bytes may have waited for this module), once it is complete or `ms` after that. Bytes on the
// line: a body arrives decoded, so a compressed one (Content-Encoding) is counted at its
// Content-Length over the manifest's size of the file (the .wasm's Brotli is 3.5 times
// smaller: counted decoded, a 9 Mbit/s line read as 31). What is read is a clone of the
// response; the next fetch of that URL (Pyodide's own, of the .wasm) gets the response itself,
// its body as it arrives. Not a Response made here: Chromium keeps the optimized code of a
// .wasm compiled from a fetched response in its code cache, keyed by that response's URL, so a
// returning reader's Python runs optimized from the start (a constructed one has no URL; bench/
// ideas.md, row "The .wasm's response handed to Pyodide").

import * as messages from "./messages.js";

const PROGRESS_MS = 250;
// An empty zip archive: only its end-of-central-directory record (APPNOTE.TXT 4.3.16).
const EMPTY_ZIP = new Uint8Array([0x50, 0x4b, 0x05, 0x06, ...new Array(18).fill(0)]);
const NO_BODY = new Set([101, 204, 205, 304]);
const STDLIB = "python_stdlib.zip";
// What each boot path does not download before READY (worker-python.js).
const SKIPPED = {
  snapshot: (m) => [STDLIB, m.stdlib_lite, m.wheel],
  lite: (m) => [STDLIB, m.snapshot, m.wheel],
  plain: (m) => [m.snapshot, m.stdlib_lite],
};

export class Downloads {
  constructor(scope, post, onCut) {
    this.post = post;
    this.onCut = onCut;
    this.loaded = 0;
    this.total = 0;
    this.sizes = new Map(); // absolute URL (no query) -> bytes the manifest says
    this.imported = new Set();
    this.empty = null;
    this.stopped = false;
    this.last = 0;
    this.keeping = null; // {href, chunks, done}
    this.prefetched = new Map(); // href -> {chunks, done, error, first, got, wake, head}
    const realFetch = scope.fetch.bind(scope);
    this.realFetch = realFetch;
    scope.fetch = (input, init) => this.fetch(realFetch, input, init);
  }

  expect(manifest, manifestURL, path) {
    const files = (manifest && manifest.files) || {};
    const skip = (SKIPPED[path] || SKIPPED.plain)(manifest || {});
    this.sizes.clear();
    this.total = 0;
    for (const [path, size] of Object.entries(files)) {
      if (!Number.isFinite(size) || skip.includes(path.split("/").pop())) continue;
      this.sizes.set(new URL(path, manifestURL).href, size);
      this.total += size;
    }
    this.manifestURL = manifestURL;
    this.tick(true);
  }

  arrived(path) {
    if (this.stopped || this.imported.has(path) || !this.manifestURL) return;
    this.imported.add(path);
    this.loaded += this.sizes.get(new URL(path, this.manifestURL).href) || 0;
    this.tick(true);
  }

  keep(href) {
    this.keeping = href ? { href, chunks: [], done: false } : null;
  }

  kept(href) {
    const k = this.keeping;
    if (!k || k.href !== href || !k.done) return null;
    const out = new Uint8Array(k.chunks.reduce((n, c) => n + c.byteLength, 0));
    let at = 0;
    for (const c of k.chunks) {
      out.set(c, at);
      at += c.byteLength;
    }
    return out;
  }

  prefetch(href, started = null) {
    const entry = { done: false, error: null, first: 0, got: 0, waiting: [] };
    entry.wake = () => entry.waiting.splice(0).forEach((f) => f());
    entry.head = (async () => {
      const original = await (started ? started.response : this.realFetch(href));
      const response = await this.fetch(this.realFetch, href, undefined, false,
                                        original.body ? original.clone() : original); // counted
      if (started && started.at) entry.first = started.at;
      const length = Number(response.headers.get("content-length"));
      if (response.headers.get("content-encoding") && length > 0) entry.wire = length;
      (async () => {
        const reader = response.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          entry.first ||= performance.now();
          entry.got += value.byteLength;
          entry.wake();
        }
        entry.done = true;
      })().catch((err) => { entry.error = err; }).finally(entry.wake);
      return original;
    })();
    entry.head.catch((err) => { entry.error = err; entry.wake(); });
    this.prefetched.set(href, entry);
  }

  rate(href, ms) {
    const entry = this.prefetched.get(href) || this.taken;
    if (!entry) return Promise.resolve(Infinity);
    return new Promise((resolve) => {
      let timer = null;
      const check = () => {
        const elapsed = entry.first ? performance.now() - entry.first : 0;
        if (entry.error) return resolve(0);
        if (!entry.done && (!entry.first || elapsed < ms)) {
          entry.waiting.push(check);
          if (entry.first && !timer) timer = setTimeout(check, ms - elapsed);
          return undefined;
        }
        clearTimeout(timer);
        const size = this.sizes.get(href); // decoded: the file as it is on the server
        const onLine = entry.wire && size ? entry.wire / size : 1;
        return resolve(entry.done && elapsed < 1 ? Infinity
          : (entry.got * onLine * 1000) / elapsed);
      };
      check();
    });
  }

  emptyZipURL(url) {
    this.empty = new URL(url);
    this.empty.search = "?empty";
    return this.empty;
  }

  stop() {
    this.stopped = true;
  }

  tick(now) {
    if (this.stopped) return;
    const t = performance.now();
    if (!now && t - this.last < PROGRESS_MS) return;
    this.last = t;
    this.post(messages.progress(this.loaded, this.total));
  }

  async fetch(realFetch, input, init, takeOver = true, started = null) {
    const href = typeof input === "string" || input instanceof URL ? String(input) : input.url;
    if (this.empty && href === this.empty.href) {
      return new Response(EMPTY_ZIP, { headers: { "content-type": "application/zip" } });
    }
    const absolute = new URL(href, self.location.href).href;
    const pre = takeOver && this.prefetched.get(absolute);
    if (pre && !(init && init.method) && !(input && input.method)) {
      this.prefetched.delete(absolute);
      this.taken = pre;
      return pre.head; // the response itself (prefetch)
    }
    const response = await (started || realFetch(input, init));
    const method = ((init && init.method) || (input && input.method) || "GET").toUpperCase();
    if (this.stopped || method === "HEAD" || !response.body || NO_BODY.has(response.status)) {
      return response;
    }
    const url = new URL(href, self.location.href);
    // read at the end: a body that started before the manifest was in (the prefetched .wasm)
    const expected = () => (response.ok ? this.sizes.get(url.origin + url.pathname) : undefined);
    const keep = response.ok && this.keeping && this.keeping.href === url.origin + url.pathname
      ? this.keeping : null;
    if (keep) keep.chunks = [];
    const reader = response.body.getReader();
    let got = 0;
    const fault = (err, controller) => {
      this.onCut(err, url);
      controller.error(err);
    };
    const body = new ReadableStream({
      pull: async (controller) => {
        let chunk;
        try {
          chunk = await reader.read();
        } catch (err) {
          return fault(new Error(`download cut: ${url.pathname} after ${got} bytes (${err})`),
                       controller);
        }
        if (chunk.done) {
          const size = expected();
          if (size !== undefined && got !== size) {
            return fault(new Error(`download cut: ${url.pathname}: ${got} bytes of ${size}`),
                         controller);
          }
          if (keep) keep.done = true;
          this.tick(true);
          return controller.close();
        }
        got += chunk.value.byteLength;
        if (keep) keep.chunks.push(chunk.value);
        this.loaded += chunk.value.byteLength;
        this.tick(false);
        controller.enqueue(chunk.value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, {
      status: response.status, statusText: response.statusText, headers: response.headers });
  }
}
