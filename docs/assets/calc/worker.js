// The calculators' Module Web Worker, its first file. It imports nothing: every import is a
// round trip before the code that follows it runs (150 ms each on a mobile line), and the
// worker's first downloads would wait for them. So this file requests the .wasm and the
// manifest at once, keeps the page's messages, and only then imports the rest
// (./worker-python.js: Pyodide, calc and the messages; it takes both requests over and answers
// the kept messages in order). A failed import is told to the page as any failure to load is
// (./messages.js, imported then); if that module cannot come either, the error is thrown again
// here, where it reaches the page as the worker's error event, as a failed static import did.

const here = new URL(".", import.meta.url);
const requests = new Map(); // absolute URL -> {response: Promise<Response>, at: ms}
for (const url of [new URL("../pyodide/pyodide.asm.wasm", here), new URL("manifest.json", here)]) {
  const entry = { response: null, at: 0 };
  entry.response = fetch(url).then((response) => {
    entry.at = performance.now(); // its headers: the rate of its body is timed from here
    return response;
  });
  entry.response.catch(() => {}); // whoever takes it over reports a failure
  requests.set(url.href, entry);
}
const kept = [];
self.onmessage = (event) => kept.push(event);
globalThis[Symbol.for("calc.worker.early")] = { requests, kept };
import("./worker-python.js").catch(async (err) => {
  try {
    const messages = await import("./messages.js");
    self.postMessage(messages.error(messages.STAGE.RUNTIME, String((err && err.message) || err)));
  } catch {
    setTimeout(() => { throw err; });
  }
});
