// FAQ pages: a copy-link button beside every question (h2.faq, each with a stable id), since
// readers share one answer, not the page. The button copies the question's address (page URL
// and #id) and says so in a status line beside it; the question a link lands on is highlighted
// by site.css (:target). This script types no text: the words come from its own <script>
// element's data-msg-* attributes (data-msg-button, data-msg-label, data-msg-copied,
// data-msg-failed), written by the template (overrides/main.html) from the catalogs.
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) return;
  var msg = function (key) { return script.getAttribute("data-msg-" + key) || ""; };

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).then(function () { return true; },
                                                      function () { return legacy(text); });
    }
    return Promise.resolve(legacy(text));
  }

  function legacy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    var focused = document.activeElement;
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    area.remove();
    if (focused && focused.focus) focused.focus();
    return ok;
  }

  function add(heading) {
    if (!heading.id || heading.querySelector(".faq-copy")) return;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "md-button faq-copy";
    button.textContent = msg("button");
    // The accessible name is the visible text (WCAG 2.5.3); the longer wording is the tooltip.
    if (msg("label")) button.title = msg("label");
    button.setAttribute("data-faq-copy", heading.id);
    var status = document.createElement("span");
    status.className = "faq-copied";
    status.setAttribute("role", "status");
    var timer = null;
    button.addEventListener("click", function () {
      var url = new URL(window.location.href);
      url.hash = heading.id;
      copy(url.href).then(function (ok) {
        status.textContent = ok ? msg("copied") : msg("failed");
        clearTimeout(timer);
        timer = setTimeout(function () { status.textContent = ""; }, 5000);
      });
    });
    heading.appendChild(button);
    heading.appendChild(status);
  }

  var headings = document.querySelectorAll(".md-typeset h2.faq[id]");
  for (var i = 0; i < headings.length; i++) add(headings[i]);
})();
