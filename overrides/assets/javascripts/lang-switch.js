// Language switcher: go to the same page in the other language *and* keep the #anchor
// (FAQ ids are identical in every locale) and the query (a calculator's state: the field
// names are the same in every locale, so the other language shows the same calculation). static-i18n already points each entry of
// Material's language menu at the translated page; Material's own click handling would
// replace that link by the other language's home page, so this one runs first (capture).
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    if (event.defaultPrevented || event.button !== 0 ||
        event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) {
      return;
    }
    var target = event.target instanceof Element ? event.target : null;
    var link = target && target.closest(".md-select a[hreflang]");
    if (!link) {
      return;
    }
    var url = new URL(link.getAttribute("href"), window.location.href);
    if (window.location.search && !url.search) {
      url.search = window.location.search;
    }
    if (window.location.hash && !url.hash) {
      url.hash = window.location.hash;
    }
    event.preventDefault();
    event.stopPropagation();
    window.location.assign(url.href);
  }, true);
})();
