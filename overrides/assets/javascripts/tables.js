// Wide tables: Material puts every table of the content in a box that scrolls sideways
// (.md-typeset__scrollwrap). A box that scrolls must be reachable by keyboard, or keyboard
// readers cannot see its hidden columns (WCAG 2.1.1; axe's scrollable-region-focusable). Each
// box that overflows gets tabindex="0", role="region" and the table's name (its caption, else
// the heading above it); a box that stops overflowing (a wider window) loses them again.
// Tables are laid out only near the viewport (site.css, content-visibility: auto): a box not
// laid out yet is presumed to scroll, so that it is a keyboard region however it comes into
// view (tabbing to the next link, a jump to an anchor, a tool measuring it), and is measured
// once it is rendered.
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

  function laidOutLate(wrap) {
    var cell = wrap.querySelector("table > *");
    return !!cell && typeof cell.checkVisibility === "function" &&
      !cell.checkVisibility({ contentVisibilityAuto: true });
  }

  function update() {
    var wraps = document.querySelectorAll(".md-typeset__scrollwrap");
    // Every width first, then every change: an attribute written between two reads would
    // make the next read lay the whole page out again (once per table on a long page).
    var overflows = [];
    for (var j = 0; j < wraps.length; j++) {
      overflows.push(laidOutLate(wraps[j]) ||
                     wraps[j].scrollWidth > wraps[j].clientWidth + 1);
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
  // A box laid out late is measured once it is rendered; the event does not bubble, so it is
  // caught on its way down.
  var queued = false;
  document.addEventListener("contentvisibilityautostatechange", function (event) {
    if (event.skipped || queued) return;
    queued = true;
    requestAnimationFrame(function () { queued = false; update(); });
  }, true);
  // Chromium (156) leaves the previous palette's colours in the computed style of links inside
  // a box not laid out (their variables are the new palette's), which tools that read computed
  // styles, as axe's contrast rules do, take for the page's colours. From the reader's first
  // change of palette on, every box is laid out like any other table (html[data-tables-laid-out]
  // in site.css): one style pass, at the reader's click, as without the late layout.
  document.addEventListener("change", function (event) {
    var palette = event.target.closest && event.target.closest("[data-md-component='palette']");
    if (!palette || document.documentElement.hasAttribute("data-tables-laid-out")) return;
    document.documentElement.setAttribute("data-tables-laid-out", "");
    requestAnimationFrame(update);
  }, true);
  var pending = 0;
  window.addEventListener("resize", function () {
    clearTimeout(pending);
    pending = setTimeout(update, 150);
  });
})();
