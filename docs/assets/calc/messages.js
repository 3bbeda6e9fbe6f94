// The messages between the page script (page.js) and the calculators' worker (worker.js, worker-python.js),
// written down once: both import this module and build every message with it.
//
// Page -> worker (postMessage):
//   request(id, name, query, locale)   {id, name, query, locale}
//                                      name: a widget (data-calc-widget), query: {field: string}
//                                      as the form holds it (a yes/no field "true" or "false",
//                                      as calc's canonical query), locale: its data-locale
//   start()                            {type: "start"}: a worker started early (its name from
//                                      earlyName) may start Python now (boot.js)
// Worker -> page:
//   status(stage, truthy?)             {type: "status", stage, truthy}: loading got to `stage`
//                                      (RUNTIME, then PACKAGE, then READY; at READY `truthy`
//                                      lists the words calc reads as yes in a yes/no field)
//   progress(loaded, total)            {type: "progress", loaded, total}: bytes of the runtime's
//                                      files have arrived (decoded bytes so far; total: what
//                                      the manifest says the chosen path downloads, 0 unknown).
//                                      Sent while bytes arrive: the page's load guard waits
//                                      for the next one (page.js), not for the whole download
//   error(stage, detail, cause)        {type: "error", stage, detail, cause}: Python could not
//                                      be loaded at `stage`, or broke (stage CRASHED); fatal.
//                                      cause NETWORK: a file stopped arriving or came cut short
//   result(id, result)                 {type: "result", id, result}: the answer to request `id`,
//                                      calc.render.results(): {ok, html, errors, query, form,
//                                      placeholders, status}
//   failure(id, detail)                {type: "failure", id, detail}: request `id` raised
//                                      (Python is still alive; should never happen)
//
// The worker's name (new Worker(url, {name})) is workerName(widget, locale) of the page's
// first widget: what the worker warms up before it says READY; earlyName(name) for a worker
// started from the page's <head> (boot.js), which waits for start() before Python starts.

export const TYPE = Object.freeze({
  STATUS: "status",
  ERROR: "error",
  RESULT: "result",
  FAILURE: "failure",
  PROGRESS: "progress",
  START: "start",
});

export const CAUSE = Object.freeze({
  NETWORK: "network", // a download failed, was cut short or stopped (reload to retry)
  LOAD: "load", // anything else: the browser cannot run it, a file is missing or wrong
});

export const STAGE = Object.freeze({
  RUNTIME: "runtime", // Pyodide is loading
  PACKAGE: "package", // the calc wheel is being installed
  READY: "ready", // requests are answered
  CRASHED: "crashed", // Python stopped after it had worked
});

export const request = (id, name, query, locale) => ({ id, name, query, locale });
export const start = () => ({ type: TYPE.START });
export const status = (stage, truthy = null) => ({ type: TYPE.STATUS, stage, truthy });
export const error = (stage, detail, cause = CAUSE.LOAD) =>
  ({ type: TYPE.ERROR, stage, detail, cause });
export const progress = (loaded, total) => ({ type: TYPE.PROGRESS, loaded, total });
export const result = (id, value) => ({ type: TYPE.RESULT, id, result: value });
export const failure = (id, detail) => ({ type: TYPE.FAILURE, id, detail });

export const workerName = (widget, locale) => `${widget} ${locale}`;
export const earlyName = (name) => `${name} early`;
export function readWorkerName(name) {
  const [widget = "", locale = "", early = ""] = String(name || "").split(" ");
  return { widget, locale, early: early === "early" };
}
