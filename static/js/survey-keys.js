// Keyboard for pages that ask several questions at once (Likert statements, MOST/LEAST rows,
// explanations to rate). Each question is an element with data-group; its radios carry
// data-keys="a 1" (the keys that pick them). A key answers the current question (the one
// holding the focus, else the first unanswered one) and moves on to the next unanswered one.
// Enter still submits through keys.js. Typing in a text field is never intercepted.
(function () {
  "use strict";
  var form = document.getElementById("task-form");
  if (!form) return;
  var groups = Array.prototype.slice.call(form.querySelectorAll("[data-group]"));
  if (!groups.length) return;

  // A question hidden by the page's answers (questionnaire.js) is never the current one.
  function live() { return groups.filter(function (g) { return !g.closest("[hidden]"); }); }
  function answered(group) { return !!group.querySelector("input:checked"); }
  var typing = window.roftTyping; // keys.js
  function current() {
    var focused = document.activeElement && document.activeElement.closest("[data-group]");
    if (focused && live().indexOf(focused) >= 0) return focused;
    return live().filter(function (g) { return !answered(g); })[0] || null;
  }
  function mark(group) {
    groups.forEach(function (g) { g.classList.toggle("is-current", g === group); });
  }
  function moveOn(from) {
    var open = live();
    var start = open.indexOf(from);
    var rest = open.slice(start + 1).concat(open.slice(0, start));
    var next = rest.filter(function (g) { return !answered(g); })[0];
    if (!next) { mark(null); return; }
    mark(next);
    var first = next.querySelector("input:not([disabled])");
    if (first) first.focus({ preventScroll: true });
    next.scrollIntoView({ block: "center", behavior: "smooth" });
  }

  document.addEventListener("keydown", function (event) {
    if (!form.isConnected) return; // a page since replaced by a one-trip swap
    if (event.ctrlKey || event.metaKey || event.altKey || typing(document.activeElement)) return;
    if (event.key.length !== 1) return;
    var group = current();
    if (!group) return;
    var target = group.querySelector('[data-keys~="' + CSS.escape(event.key.toLowerCase()) + '"]');
    if (!target || target.disabled) return;
    event.preventDefault();
    target.click();
    target.focus({ preventScroll: true });
    moveOn(group);
  });
  form.addEventListener("focusin", function (event) {
    var group = event.target.closest("[data-group]");
    if (group) mark(group);
  });
  mark(current());
})();
