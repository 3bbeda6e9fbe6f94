// The calculators' page script (an ES module, loaded on pages with a widget).
//
// Form <-> worker <-> DOM. Python (calc.render in Pyodide, in ./worker.js and ./worker-python.js)
// computes and renders everything; this script only moves the form's state to the worker and puts
// back what it returns. It types no text of its own: every message comes from the widget root's
// data-msg-* attributes, rendered by Python from the message catalogs. Values from the URL or the
// form go into controls as values (never as HTML); the results HTML is Python's, escaped there.
//
// Widget root: [data-calc-widget=NAME][data-state=loading|ready|error], holding
//   form[data-calc-form]                 fields named as the engine's interface
//   [data-calc-error-for=FIELD]          each field's error slot, id WIDGETID-FIELD-error
//   [data-calc-status]                   role=status line
//   [data-calc-copy]                     copy-link button; [data-calc-copy=ID] (anywhere in the
//                                        root, results too): copies the text of element ID and
//                                        says data-msg-KEY, KEY its data-calc-copied or
//                                        "text-copied" (else "copied")
//   [data-calc-results]                  results region (patched on each result: ./patch.js)
// The root's data-busy is "true" while a recalculation is pending and "false" once the last
// one is on the page (tests and benchmarks wait for it).
//
// Loading: the worker reports the bytes that have arrived (messages.progress); the root's
// data-progress is the whole percent of the total, and the status line adds data-msg-progress
// with {n} the percent in data-msg-digits' digits (without those attributes: the loading text
// alone). An edit before Python is ready marks the figures stale and says so
// (data-msg-loading-stale); a link's inputs are put into the form at once, the figures marked
// stale until Python has computed them (data-msg-loading-link). When Python is ready the form
// is computed as it is then: a link's value counts only for a field the reader has not edited.
//
// Faults end in data-state="error", the figures kept and a message saying what happened: no byte
// for data-timeout-ms ("timeout": stalled; a slow download that keeps arriving never times out),
// a download failed or cut short ("network"), Python could not load ("error": no Worker, no
// WebAssembly, a file missing), or stopped after it had worked ("crash": an uncaught error in the
// worker, Python broken, or a request unanswered for data-timeout-ms). Nothing waits forever; a
// reload starts again.
//
// It knows no widget and no locale: names, locales, texts and the load timeout come from the
// widget roots' data-* attributes, what a yes/no field reads as yes from the worker (calc);
// messages: ./messages.js; the worker: ./boot.js; once ready, ./offline.js (service worker).

import * as messages from "./messages.js";
import { copy } from "./copy.js";
import { takeWorker } from "./boot.js";
import { patch } from "./patch.js";

const { TYPE, STAGE, CAUSE } = messages;
const TIMEOUT_MS = 20000; // unless the widget root says otherwise (data-timeout-ms)
const PROGRESS_STEP = 5; // the status line's percent moves in these steps (fewer announcements)
// The words calc reads as yes (calc.fields.TRUE_WORDS), from the worker's READY status; until
// then a yes/no field is checked when it holds the checkbox's own value (calc's canonical yes).
let truthy = null;
// An attribute written only when its value changes (null: absent).
const setAttr = (el, name, value) => {
  if (el.getAttribute(name) === value) return;
  if (value === null) el.removeAttribute(name);
  else el.setAttribute(name, value);
};

function start(roots) {
  const widgets = roots.map((root, index) => new Widget(root, index === 0));
  const byId = new Map();
  let nextId = 1;
  let ready = false;
  let failed = false;
  let worker;
  let watchdog = null;
  let quiet = null; // offline.js whenQuiet()'s poke, once Python is ready
  // Read each time: a test may shorten it once the calculator is up.
  const limit = () => Number(roots[0].dataset.timeoutMs) || TIMEOUT_MS;

  const fail = (kind) => {
    if (failed) return;
    failed = true;
    const crashed = ready; // it had worked: it stopped, rather than never loaded
    ready = false;
    clearTimeout(guard);
    clearTimeout(watchdog);
    if (worker) worker.terminate();
    for (const w of widgets) w.fail(crashed ? "crash" : kind);
  };

  // While a request is unanswered the worker must answer within the limit (a worker that died
  // silently sends nothing, not even an error event).
  const watch = () => {
    clearTimeout(watchdog);
    watchdog = byId.size ? setTimeout(() => fail("crash"), limit()) : null;
  };

  const send = (w, query, init) => {
    const id = nextId++;
    byId.set(id, { w, init });
    w.inFlight = true;
    w.root.dataset.busy = "true";
    worker.postMessage(messages.request(id, w.name, query, w.locale));
    watch();
    quiet?.(); // the service worker waits for a quiet moment (./offline.js)
  };

  for (const w of widgets) {
    w.request = (init = false) => {
      if (!ready) {
        w.markStale(true); // the figures are not the form's (until Python computes it)
        if (!failed) w.waiting("edit");
        return;
      }
      if (w.inFlight) {
        w.dirty = true; // sent when the answer in flight arrives
        w.root.dataset.busy = "true";
        return;
      }
      w.dirty = false;
      const query = init ? { ...w.formQuery(), ...w.linkQuery() } : w.formQuery();
      const key = JSON.stringify(query);
      if (!init && key === w.lastSent) {
        w.root.dataset.busy = "false"; // e.g. `change` after `input`: nothing new
        return;
      }
      w.lastSent = key;
      send(w, query, init);
    };
  }

  // The load guard: it fires when nothing has arrived for the limit (bytes or a stage), never
  // because a download that keeps arriving is slow.
  let guard = null;
  const arm = () => (clearTimeout(guard), (guard = setTimeout(() => fail("timeout"), limit())));
  arm();
  let handOver = null;
  try { // the name says what to warm up (worker.js); early.js's worker if there is one (boot.js)
    ({ worker, handOver } = takeWorker(messages.workerName(widgets[0].name, widgets[0].locale)));
  } catch {
    fail("error");
    return;
  }
  worker.addEventListener("error", (event) => {
    event.preventDefault();
    fail("error");
  });
  worker.addEventListener("messageerror", () => fail("error"));
  worker.addEventListener("message", (event) => {
    const message = event.data || {};
    if (failed) return;
    if (!ready) arm();
    if (message.type === TYPE.PROGRESS) {
      for (const w of widgets) w.progress(message.loaded, message.total);
    } else if (message.type === TYPE.STATUS) {
      for (const w of widgets) w.root.dataset.stage = message.stage;
      if (message.stage === STAGE.READY) {
        ready = true;
        clearTimeout(guard);
        truthy = new Set(message.truthy || []);
        for (const w of widgets) {
          w.pending = null;
          delete w.root.dataset.pending;
          w.fillYesNo(w.linkQuery()); // the link's yes/no values, now that calc said what is yes
          w.setState("ready");
          w.request(true);
        }
        import("./offline.js").then((m) => (quiet = m.whenQuiet()), () => {}); // service worker
      }
    } else if (message.type === TYPE.ERROR) {
      fail(message.cause === CAUSE.NETWORK ? "network" : "error");
    } else if (message.type === TYPE.RESULT || message.type === TYPE.FAILURE) {
      const entry = byId.get(message.id);
      if (!entry) return;
      byId.delete(message.id);
      watch();
      const { w, init } = entry;
      w.inFlight = false;
      if (w.dirty) {
        w.dirty = false;
        if (JSON.stringify(w.formQuery()) !== w.lastSent) {
          w.request(); // the form changed meanwhile: skip this answer, ask for the new state
          return;
        }
      }
      if (message.type === TYPE.RESULT) w.apply(message.result, init);
      else w.failure();
      w.settle();
    }
  });
  handOver(); // what an early worker said before now, then Python starts
}

class Widget {
  constructor(root, ownsUrl) {
    this.root = root;
    this.name = root.dataset.calcWidget;
    this.locale = root.dataset.locale || document.documentElement.lang || "";
    this.form = root.querySelector("[data-calc-form]");
    this.status = root.querySelector("[data-calc-status]");
    this.results = root.querySelector("[data-calc-results]");
    this.copyButton = root.querySelector('[data-calc-copy=""]');
    this.ownsUrl = ownsUrl;
    this.inFlight = false;
    this.dirty = false;
    this.urlPending = false;
    this.firstResult = true;
    this.touched = false;
    this.canonical = null;
    this.lastSent = null;
    this.edited = new Set(); // fields the reader has edited (a link's value no longer counts)
    this.pending = null; // while loading: "link" or "edit" (the figures are not the form's)
    this.percent = null;
    this.request = () => {};
    this.names = new Set();
    for (const el of this.form.elements) if (el.name) this.names.add(el.name);
    // Each control's own aria-describedby (its help text), kept here, not in the page
    this.describedBy = new Map();
    for (const el of this.controls()) {
      this.describedBy.set(el, el.getAttribute("aria-describedby") || "");
    }
    this.urlQuery = ownsUrl ? this.readUrl() : {};
    if (Object.keys(this.urlQuery).length) {
      this.fill(this.urlQuery);
      this.markStale(true); // the static figures are the defaults, not the link's
      this.touched = true;
      this.waiting("link");
    }
    this.updateVisibility();

    this.form.addEventListener("submit", (event) => event.preventDefault());
    const onEdit = (event) => {
      if (event && event.target && event.target.name) this.edited.add(event.target.name);
      this.touched = true;
      this.updateVisibility();
      this.request();
    };
    this.form.addEventListener("input", onEdit);
    this.form.addEventListener("change", onEdit);
    this.form.addEventListener("reset", () => {
      // the controls take their defaults after this event: read them on the next task
      if (this.root.dataset.state === "ready") this.root.dataset.busy = "true";
      for (const name of this.names) this.edited.add(name); // the reader's choice: defaults
      setTimeout(onEdit, 0);
    });
    // Copy buttons, also those Python puts into the results later.
    this.root.addEventListener("click", (event) => {
      const button = event.target.closest && event.target.closest("[data-calc-copy]");
      if (!button || !this.root.contains(button)) return;
      const id = button.dataset.calcCopy;
      if (id) this.copyText(id, button.dataset.calcCopied);
      else this.copyLink();
    });
  }

  // The link's values for the fields the reader has not edited since the page loaded.
  linkQuery() {
    const query = {};
    for (const [name, value] of Object.entries(this.urlQuery)) {
      if (!this.edited.has(name)) query[name] = value;
    }
    return query;
  }

  // Python is not ready yet: why the figures are not the form's ("link" or "edit").
  waiting(why) {
    if (this.root.dataset.state !== "loading") return;
    this.pending = why === "edit" || this.pending === "edit" ? "edit" : "link";
    this.root.dataset.pending = this.pending;
    this.say(this.loadingText());
  }

  loadingText() {
    const base = (this.pending === "edit" && this.msg("loading-stale"))
      || (this.pending === "link" && this.msg("loading-link")) || this.msg("loading");
    const template = this.msg("progress");
    if (this.percent === null || !template || !base) {
      return base || (this.status ? this.status.textContent : "");
    }
    return `${base} ${template.replace("{n}", this.digits(String(this.percent)))}`;
  }

  digits(text) {
    const table = this.msg("digits");
    if (table.length !== 10) return text;
    return text.replace(/[0-9]/g, (d) => table[Number(d)]);
  }

  // Bytes of the runtime have arrived: how far, in whole percent of the total (if known).
  progress(loaded, total) {
    if (this.root.dataset.state !== "loading" || !(total > 0)) return;
    const percent = Math.max(0, Math.min(99, Math.floor((100 * loaded) / total)));
    this.root.dataset.progress = String(percent);
    const step = percent - (percent % PROGRESS_STEP);
    if (step === this.percent) return;
    this.percent = step;
    this.say(this.loadingText());
  }

  msg(key) {
    return this.root.getAttribute(`data-msg-${key}`) || "";
  }

  setState(state) {
    this.root.dataset.state = state;
  }

  say(text) {
    if (this.status && this.status.textContent !== text) this.status.textContent = text;
  }

  controls() {
    // one element per field: the control with id WIDGETID-FIELD (a radio group's fieldset)
    const out = [];
    for (const name of this.names) {
      const el = this.control(name);
      if (el) out.push(el);
    }
    return out;
  }

  control(name) {
    return document.getElementById(`${this.root.id}-${name}`);
  }

  readUrl() {
    const params = new URLSearchParams(window.location.search);
    const query = {};
    for (const key of new Set(params.keys())) {
      if (!this.names.has(key)) continue;
      const values = params.getAll(key);
      query[key] = values[values.length - 1]; // the last one wins, as in calc.fields.first
    }
    return query;
  }

  formQuery() {
    const query = {};
    for (const el of this.form.elements) {
      if (!el.name || el.disabled) continue;
      if (el.type === "radio") {
        if (el.checked) query[el.name] = el.value;
      } else if (el.type === "checkbox") {
        query[el.name] = el.checked ? "true" : "false";
      } else if (el.type !== "button" && el.type !== "submit" && el.type !== "reset") {
        query[el.name] = el.value;
      }
    }
    return query;
  }

  // Only what differs is written (each write is a style invalidation; a caret would jump).
  fill(values) {
    const check = (el, on) => { if (el.checked !== on) el.checked = on; };
    for (const [name, value] of Object.entries(values)) {
      const item = this.form.elements.namedItem(name);
      if (!item || value == null) continue;
      const text = String(value);
      if (typeof RadioNodeList !== "undefined" && item instanceof RadioNodeList) {
        const radios = Array.from(item).filter((el) => el.type === "radio");
        if (radios.some((r) => r.value === text)) radios.forEach((r) => check(r, r.value === text));
      } else if (item.type === "checkbox") {
        const word = text.trim().toLowerCase();
        check(item, truthy ? truthy.has(word) : word === item.value);
      } else if (item.value === text) {
        continue;
      } else if (item.tagName === "SELECT") {
        if (Array.from(item.options).some((o) => o.value === text)) item.value = text;
      } else if ("value" in item) {
        item.value = text;
      }
    }
  }

  // The yes/no fields of `values` again (a link's query), once calc has said which words are
  // yes: "1", "yes" or "on" in a link are then shown checked too.
  fillYesNo(values) {
    const yesNo = {};
    for (const [name, value] of Object.entries(values)) {
      const item = this.form.elements.namedItem(name);
      if (item && item.type === "checkbox") yesNo[name] = value;
    }
    this.fill(yesNo);
  }

  updateVisibility() {
    const query = this.formQuery();
    for (const el of this.root.querySelectorAll("[data-show-when]")) {
      const [name, value] = el.dataset.showWhen.split("=");
      setAttr(el, "hidden", query[name] !== value ? "" : null);
    }
  }

  markStale(stale) {
    setAttr(this.results, "data-stale", stale ? "true" : null);
  }

  // Every answer, every field: only what changed is written (an edit without errors writes
  // nothing here, where it rewrote 52 slots and their controls' attributes, each a style
  // invalidation: bench/ideas.md).
  showErrors(errors) {
    for (const slot of this.form.querySelectorAll("[data-calc-error-for]")) {
      const name = slot.dataset.calcErrorFor;
      const control = this.control(name);
      const message = Object.prototype.hasOwnProperty.call(errors, name) ? errors[name] : null;
      if (slot.textContent !== (message || "")) slot.textContent = message || "";
      setAttr(slot, "hidden", message ? null : "");
      if (!control) continue;
      const own = this.describedBy.get(control) || "";
      setAttr(control, "aria-invalid", message ? "true" : null);
      setAttr(control, "aria-describedby", (message ? `${slot.id} ${own}` : own).trim() || null);
      const details = message && control.closest("details");
      if (details) details.open = true;
    }
  }

  apply(result, init) {
    const errors = result.errors || {};
    this.showErrors(errors);
    let status = result.status || "";
    if (this.firstResult) {
      status = `${this.msg("ready")} ${status}`.trim();
      this.firstResult = false;
    }
    if (!result.ok) {
      this.markStale(true);
      this.say(status);
      return;
    }
    if (init && result.form) {
      this.fill(result.form);
      this.updateVisibility();
      for (const el of this.form.querySelectorAll("details")) {
        if (el.querySelector("[aria-invalid]")) el.open = true;
      }
    }
    // The first answer for the page's own defaults holds the figures the build already put on
    // the page (the browser tests check they are the same): leave them, since replacing them
    // costs a style and layout pass of the whole page while it is still starting.
    if (!(init && !this.touched)) {
      patch(this.results, result.html); // Python's HTML: every value escaped by calc.render
    }
    this.markStale(false);
    for (const [name, text] of Object.entries(result.placeholders || {})) {
      const el = this.form.elements.namedItem(name);
      if (el && "placeholder" in el && el.placeholder !== text) el.placeholder = text;
    }
    this.canonical = result.query || null;
    if (this.ownsUrl && this.touched && this.canonical) this.urlPending = true;
    this.say(status);
  }

  // After a result: the address bar follows (history.replaceState costs a style and layout
  // pass and a round trip to the browser, so it waits until the new figures are painted), then
  // data-busy says the widget is idle.
  settle() {
    if (!this.urlPending) {
      this.root.dataset.busy = "false";
      return;
    }
    const token = (this.settleToken = (this.settleToken || 0) + 1);
    const flush = () => {
      if (token !== this.settleToken) return; // done already, or a newer result will do it
      this.settleToken++;
      this.urlPending = false;
      if (this.canonical) history.replaceState(history.state, "", this.link());
      if (!this.inFlight && !this.dirty) this.root.dataset.busy = "false";
    };
    requestAnimationFrame(() => setTimeout(flush, 0));
    setTimeout(flush, 100); // hidden tabs run no animation frames
  }

  failure() {
    this.markStale(true);
    this.say(this.msg("failure"));
  }

  fail(kind) {
    this.setState("error");
    if (this.inFlight || this.dirty) this.markStale(true); // the answer will never come
    this.inFlight = false;
    this.dirty = false;
    this.root.dataset.busy = "false";
    const text = { timeout: this.msg("stalled") || this.msg("timeout"),
                   network: this.msg("network") || this.msg("error"),
                   crash: this.msg("failure") }[kind];
    this.say(text || this.msg("error"));
  }

  link() {
    const url = new URL(window.location.href);
    if (this.canonical) url.search = new URLSearchParams(this.canonical).toString();
    return url.href;
  }

  async copyLink() {
    this.say(this.msg((await copy(this.link())) ? "copied" : "copy-failed"));
  }

  async copyText(id, key) {
    const el = document.getElementById(id);
    const text = !el ? "" : "value" in el && el.tagName !== "BUTTON" ? el.value : el.textContent;
    const ok = Boolean(text) && (await copy(text));
    const done = (key && this.msg(key)) || this.msg("text-copied") || this.msg("copied");
    this.say(ok ? done : this.msg("copy-failed"));
  }
}

const roots = Array.from(document.querySelectorAll("[data-calc-widget]"));
if (roots.length) start(roots);
