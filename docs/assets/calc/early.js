// In the <head> of pages with a calculator (overrides/main.html): start the worker now, in its
// early mode (./boot.js); page.js takes it over. The tag carries the worker's name.
import { startEarly } from "./boot.js";

const tag = document.querySelector("script[data-calc-worker]");
if (tag) startEarly(tag.dataset.calcWorker);
