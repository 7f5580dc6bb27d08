// A task preview (the crowd platform's preview before a worker accepts): its form never submits.
(function () {
  "use strict";
  document.addEventListener("submit", function (event) {
    if (event.target.matches("form[data-never-submit]")) event.preventDefault();
  }, true);
})();
