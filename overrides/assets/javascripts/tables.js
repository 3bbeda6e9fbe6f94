// Wide tables: Material puts every table of the content in a box that scrolls sideways
// (.md-typeset__scrollwrap). A box that scrolls must be reachable by keyboard, or keyboard
// readers cannot see its hidden columns (WCAG 2.1.1; axe's scrollable-region-focusable). Each
// box that overflows gets tabindex="0", role="region" and the table's name (its caption, else
// the heading above it); a box that stops overflowing (a wider window) loses them again.
(function () {
  "use strict";

  function text(el) {
    var copy = el.cloneNode(true);
    var links = copy.querySelectorAll(".headerlink");
    for (var i = 0; i < links.length; i++) links[i].remove();
    return copy.textContent.replace(/\s+/g, " ").trim();
  }

  function name(wrap) {
    var caption = wrap.querySelector("caption");
    if (caption && text(caption)) return text(caption);
    for (var node = wrap; node && node !== document.body; node = node.parentElement) {
      for (var el = node.previousElementSibling; el; el = el.previousElementSibling) {
        if (/^H[1-6]$/.test(el.tagName)) return text(el);
      }
    }
    return "";
  }

  function update() {
    var wraps = document.querySelectorAll(".md-typeset__scrollwrap");
    // Every width first, then every change: an attribute written between two reads would
    // make the next read lay the whole page out again (once per table on a long page).
    var overflows = [];
    for (var j = 0; j < wraps.length; j++) {
      overflows.push(wraps[j].scrollWidth > wraps[j].clientWidth + 1);
    }
    for (var i = 0; i < wraps.length; i++) {
      var wrap = wraps[i];
      var scrolls = overflows[i];
      var marked = wrap.hasAttribute("data-scroll-focus");
      if (scrolls && !marked) {
        wrap.setAttribute("data-scroll-focus", "");
        wrap.setAttribute("tabindex", "0");
        wrap.setAttribute("role", "region");
        var label = name(wrap);
        if (label) wrap.setAttribute("aria-label", label);
      } else if (!scrolls && marked) {
        wrap.removeAttribute("data-scroll-focus");
        wrap.removeAttribute("tabindex");
        wrap.removeAttribute("role");
        wrap.removeAttribute("aria-label");
      }
    }
  }

  // Material wraps the tables when it mounts the page (document$, its documented hook).
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(function () { update(); });
  }
  window.addEventListener("load", update);
  var pending = 0;
  window.addEventListener("resize", function () {
    clearTimeout(pending);
    pending = setTimeout(update, 150);
  });
})();
