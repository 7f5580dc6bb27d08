// Copy buttons: <button data-copy="ID"> copies the text of the element with that id
// (a code, a study link) and says so in the button for a moment, in the words of its
// data-copied-text (the page's language) or "Copied".
// Loaded by the task page too, so that a done page swapped in by a one-trip answer finds it
// listening at once; a second load (that page's own tag) adds no second listener.
(function () {
  "use strict";
  if (window.roftCopy) return;
  window.roftCopy = true;
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "absolute";
    area.style.left = "-9999px";
    document.body.appendChild(area);
    area.select();
    document.execCommand("copy");
    document.body.removeChild(area);
    return Promise.resolve();
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button) return;
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) return;
    var text = "value" in source && source.tagName !== "BUTTON" ? source.value : source.textContent;
    var label = button.textContent;
    copyText(text.trim()).then(function () {
      button.textContent = button.getAttribute("data-copied-text") || "Copied";
      button.setAttribute("data-copied", "true");
      window.setTimeout(function () { button.textContent = label; }, 2000);
    });
  });
})();
