// The boundary game's round page: keyboard shortcuts (H next sentence, M machine-written,
// A all human, N next passage) and keeping the newest sentence and the buttons in view.
// The server decides everything; this file only clicks buttons and moves focus.
(function () {
  "use strict";
  var KEYS = { h: "still-human", m: "machine-written", a: "all-human", n: "next-round" };
  var typing = window.roftTyping; // keys.js
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(document.activeElement)) return;
    var id = KEYS[event.key.toLowerCase()];
    var target = id && document.getElementById(id);
    if (target && !target.disabled) {
      event.preventDefault();
      // A button of a fragment just swapped in may not be wired by htmx yet (it does so as the
      // swap settles): clicked then, its form would load a whole page. htmx wires it first
      // (nothing happens to one already wired), as keys.js does for a one-trip page.
      if (window.htmx) window.htmx.process(target.form || target);
      target.click();
    }
  });
  document.addEventListener("htmx:afterSettle", function () {
    var reason = document.getElementById("reason");
    var next = document.getElementById("still-human") || document.getElementById("machine-written") ||
      document.getElementById("next-round");
    var focus = reason || next;
    if (focus && !focus.contains(document.activeElement)) focus.focus({ preventScroll: true });
    var controls = document.getElementById("round-controls") || document.getElementById("round");
    if (controls && controls.getBoundingClientRect().bottom > window.innerHeight) {
      controls.scrollIntoView({ block: "end", behavior: "smooth" });
    }
  });
})();
