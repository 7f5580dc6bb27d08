// Keyboard shortcuts for annotation pages: a digit picks the input marked data-key="digit",
// Enter submits the task form. Typing in a text field is never intercepted.
(function () {
  "use strict";
  function typing(el) {
    return el && (el.tagName === "TEXTAREA" || (el.tagName === "INPUT" && /text|search|number|email/.test(el.type)));
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(document.activeElement)) return;
    var form = document.getElementById("task-form");
    if (!form) return;
    if (event.key === "Enter" && document.activeElement.tagName !== "BUTTON") {
      event.preventDefault();
      form.requestSubmit();
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
