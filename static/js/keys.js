// Keyboard shortcuts for annotation pages: a digit picks the input marked data-key="digit",
// Enter submits the task form (except on a link or button, which keep their own Enter), and so does Ctrl + Enter (⌘ + Enter), also from a text field,
// whose other keys (Enter alone: a new line) are never intercepted.
(function () {
  "use strict";
  if (window.roftTyping) return; // run again by a one-trip page swap: already listening
  // The one rule for "the person is typing, leave their keys alone", shared with the pages'
  // own shortcut scripts (survey-keys.js, game-round.js), which base.html loads after this one.
  function typing(el) {
    if (!el) return false;
    if (el.tagName === "TEXTAREA" || el.isContentEditable) return true;
    return el.tagName === "INPUT" && /^(text|search|number|email|url|tel|password)$/.test(el.type);
  }
  window.roftTyping = typing;
  // Submit a form as a click would. A one-trip form just swapped in may not have been wired by
  // htmx yet (it does so as the swap settles): a key pressed in that moment would post the
  // whole page instead, so htmx is asked to wire it first (it does nothing to one already wired).
  function send(form) {
    if (window.htmx && form.closest("[hx-boost]")) window.htmx.process(form);
    form.requestSubmit();
  }
  // Controls whose own Enter a keyboard user relies on: a link opens (the Leave and
  // Instructions links of a task page), a button presses, a summary opens its details.
  function ownEnter(el) {
    return !!el && !!el.closest && !!el.closest("a[href], button, summary, select, [role=button], [role=link]");
  }
  document.addEventListener("keydown", function (event) {
    var form = document.getElementById("task-form");
    // Ctrl + Enter (⌘ + Enter on a Mac) submits from anywhere, a text box included, where
    // Enter alone must stay a new line: a text box's own form (the game's reason, which
    // htmx sends), else the task form.
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey) {
      var active = document.activeElement;
      var target = (active && active.tagName === "TEXTAREA" && active.form) || form;
      if (!target) return;
      event.preventDefault();
      send(target);
      return;
    }
    if (!form) return;
    if (event.ctrlKey || event.metaKey || event.altKey || typing(document.activeElement)) return;
    if (event.key === "Enter" && !ownEnter(document.activeElement)) {
      event.preventDefault();
      send(form);
      return;
    }
    var target = form.querySelector('[data-key="' + CSS.escape(event.key) + '"]');
    if (target && !target.disabled) {
      event.preventDefault();
      target.click();
      target.focus();
    }
  });
  // A submit button disables itself after the first click (the server is idempotent anyway).
  document.addEventListener("submit", function (event) {
    var button = event.target.querySelector("[data-submit]");
    // (not when another handler held the submit back, e.g. the minimum time per page)
    if (button) window.setTimeout(function () { if (!event.defaultPrevented) button.disabled = true; }, 0);
  });
})();
