// A study's minimum time per page: the submit button of #task-form[data-min-seconds] stays
// off until that many seconds have passed since the page was shown, counting down on
// itself; Enter cannot submit earlier either. The server still flags answers given faster.
// The words come from the page (data-min-wait-text, "{seconds}" for the count), in its language.
(function () {
  "use strict";
  var form = document.getElementById("task-form");
  if (!form || !form.hasAttribute("data-min-seconds")) return;
  var seconds = parseInt(form.getAttribute("data-min-seconds"), 10);
  if (!(seconds > 0)) return;
  var button = form.querySelector("[data-submit]");
  var wait = form.querySelector("[data-min-wait]");
  var words = (wait && wait.getAttribute("data-min-wait-text")) || "You can continue in {seconds} s.";
  var readyAt = Date.now() + seconds * 1000;
  function left() { return Math.max(0, Math.ceil((readyAt - Date.now()) / 1000)); }
  function tick() {
    var remaining = left();
    if (button) button.disabled = remaining > 0;
    if (wait) wait.textContent = remaining > 0 ? words.replace("{seconds}", remaining) : "";
    if (remaining > 0) window.setTimeout(tick, 250);
  }
  function early(event) { if (left() > 0) event.preventDefault(); }
  form.addEventListener("submit", early);
  form.addEventListener("htmx:beforeRequest", early); // the one-trip post ignores a held-back submit
  tick();
})();
