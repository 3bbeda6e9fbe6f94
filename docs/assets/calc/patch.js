// New results HTML into the results region, changing only what differs from what is there.
//
// Setting innerHTML replaced the whole region on every edit (about 1,000 nodes on the
// detailed calculator): the browser then restyled and laid out all of it before the next frame
// (about 30 ms on the bench's machine, against 3 ms for this patch: bench/ideas.md), and a
// reader's open <details> in the results closed at every edit. Here the new HTML is parsed into
// an inert <template>, and the region's nodes are walked beside it: an equal subtree is left
// alone, a text or an attribute that differs is set, a node of another kind is replaced. The
// result is the same markup as innerHTML gives (tests/browser/test_results_patch.py), but for
// the `open` of a <details>, which stays as the reader left it.

export function patch(region, html) {
  const fresh = document.createElement("template");
  fresh.innerHTML = html; // Python's HTML: every value escaped by calc.render
  walk(region, fresh.content);
}

function walk(old, fresh) {
  let a = old.firstChild;
  let b = fresh.firstChild;
  while (b) {
    const next = b.nextSibling;
    if (!a) {
      old.appendChild(b);
    } else if (a.nodeType !== b.nodeType || a.nodeName !== b.nodeName) {
      old.replaceChild(b, a);
      a = b.nextSibling;
    } else {
      if (a.nodeType === Node.ELEMENT_NODE) {
        if (!a.isEqualNode(b)) {
          attributes(a, b);
          walk(a, b);
        }
      } else if (a.nodeValue !== b.nodeValue) {
        a.nodeValue = b.nodeValue;
      }
      a = a.nextSibling;
    }
    b = next;
  }
  while (a) {
    const next = a.nextSibling;
    old.removeChild(a);
    a = next;
  }
}

// The reader's own state, kept: whether a <details> is open.
const kept = (el, name) => name === "open" && el.nodeName === "DETAILS";

// By name (getAttributeNames): reading `attributes` made an Attr object for every attribute of
// every element the walk entered: about 1.4 ms of an edit's 3.8 ms in the page, against about
// 0.4 ms this way (V8's profiler over 60 edits, bench/ideas.md).
function attributes(a, b) {
  for (const name of a.getAttributeNames()) {
    if (!b.hasAttribute(name) && !kept(a, name)) a.removeAttribute(name);
  }
  for (const name of b.getAttributeNames()) {
    const value = b.getAttribute(name);
    if (a.getAttribute(name) !== value && !kept(a, name)) a.setAttribute(name, value);
  }
}
