// Run Material's own search worker (lunr and its language files, as the browser loads them)
// under Node on one search index of a built site, and print what each query finds.
//
//   node search_site.cjs SITE_DIR INDEX QUERY... -> {"query": ["location", ...], ...}
//
// INDEX is the index file, relative to SITE_DIR (search/search_index.json for English,
// <locale>/search/search_index.json for the others); locations are printed as the index has
// them, i.e. relative to that locale's root.
"use strict";
const vm = require("vm");
const fs = require("fs");
const path = require("path");

const [site, indexPath, ...queries] = process.argv.slice(2);
const dir = path.join(site, "assets/javascripts/workers");
const file = fs.readdirSync(dir).find((f) => /^search\..*\.min\.js$/.test(f));
const ctx = { console, setTimeout, clearTimeout, TextEncoder, TextDecoder };
ctx.self = ctx;
ctx.importScripts = (...urls) => {
  for (const url of urls) {
    vm.runInContext(fs.readFileSync(path.resolve(dir, url), "utf8"), ctx, { filename: url });
  }
};
let listener = null;
let pending = null;
ctx.addEventListener = (type, fn) => { if (type === "message") listener = fn; };
ctx.postMessage = (message) => { const resolve = pending; pending = null; resolve(message); };
vm.createContext(ctx);
vm.runInContext(fs.readFileSync(path.join(dir, file), "utf8"), ctx, { filename: file });

const send = (data) => new Promise((resolve) => { pending = resolve; listener({ data }); });

(async () => {
  const index = JSON.parse(fs.readFileSync(path.resolve(site, indexPath), "utf8"));
  index.options = { suggest: false };
  await send({ type: 0, data: index }); // SETUP -> READY
  const found = {};
  for (const query of queries) {
    const result = await send({ type: 2, data: query }); // QUERY -> RESULT
    found[query] = result.data.items.flatMap((group) => (Array.isArray(group) ? group : [group]))
      .map((doc) => doc.location);
  }
  process.stdout.write(JSON.stringify(found));
})().catch((error) => { console.error(error); process.exit(1); });
