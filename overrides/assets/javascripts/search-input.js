// Material's search reads its box on key-up events only: text pasted with the mouse, dropped,
// or entered through an input method that sends no key events found nothing until another key
// was pressed. Every `input` event of the search box (which all of these send) is followed by
// a synthetic key-up, so the results follow the box's text however it got there. An `input`
// that a real key press sent is followed by that key's own key-up as well; Material searches
// again only when the text has changed, so the second one costs nothing.
(function () {
  "use strict";
  document.addEventListener("input", function (event) {
    var box = event.target;
    if (!box || !box.matches || !box.matches("input.md-search__input")) return;
    box.dispatchEvent(new KeyboardEvent("keyup", { bubbles: true, key: "Unidentified" }));
  }, true);
})();
