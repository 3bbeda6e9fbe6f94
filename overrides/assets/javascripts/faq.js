// FAQ pages: a copy-link button beside every question (h2.faq, each with a stable id), since
// readers share one answer, not the page. The button copies the question's address (page URL
// and #id) and says so in a status line beside it; the question a link lands on is highlighted
// by site.css (:target). This module types no text: the words come from its own <script>
// element's data-msg-* attributes (data-msg-button, data-msg-label, data-msg-copied,
// data-msg-failed), written by the template (overrides/main.html) from the catalogs. Copying
// itself is the calculators' one clipboard helper (docs/assets/calc/copy.js).
import { copy } from "../calc/copy.js";

const script = document.querySelector("script[data-faq-copy-script]");
const msg = (key) => (script && script.getAttribute("data-msg-" + key)) || "";

function add(heading) {
  if (!heading.id || heading.querySelector(".faq-copy")) return;
  const button = document.createElement("button");
  button.type = "button";
  button.className = "md-button faq-copy";
  button.textContent = msg("button");
  // The accessible name is the visible text (WCAG 2.5.3); the longer wording is the tooltip.
  if (msg("label")) button.title = msg("label");
  button.setAttribute("data-faq-copy", heading.id);
  const status = document.createElement("span");
  status.className = "faq-copied";
  status.setAttribute("role", "status");
  let timer = null;
  button.addEventListener("click", async () => {
    const url = new URL(window.location.href);
    url.hash = heading.id;
    const ok = await copy(url.href);
    status.textContent = ok ? msg("copied") : msg("failed");
    clearTimeout(timer);
    timer = setTimeout(() => { status.textContent = ""; }, 5000);
  });
  heading.appendChild(button);
  heading.appendChild(status);
}

if (script) document.querySelectorAll(".md-typeset h2.faq[id]").forEach(add);
