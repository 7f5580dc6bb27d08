// Questions asked only for some answers (show_if): a fieldset with data-show-if="q-<id>" and
// data-show-if-values='["4","5"]' is shown while the question it names is shown and one of
// its chosen values is listed. A hidden question's inputs are disabled, so nothing of it is
// posted (the server checks the same rule and refuses an answer to a hidden question).
// Any form holding such questions follows it: the task page's and the adjudication page's.
(function () {
  "use strict";

  function follow(form, dependent) {
    function fieldset(name) { return form.querySelector('fieldset[data-question="' + CSS.escape(name) + '"]'); }
    function chosen(name) {
      return Array.prototype.slice.call(form.querySelectorAll('[name="' + CSS.escape(name) + '"]:checked'))
        .map(function (input) { return input.value; });
    }
    function shown(set) {
      if (!set) return false;
      if (!set.hasAttribute("data-show-if")) return true;
      var target = set.getAttribute("data-show-if");
      if (!shown(fieldset(target))) return false;
      var wanted = JSON.parse(set.getAttribute("data-show-if-values"));
      return chosen(target).some(function (value) { return wanted.indexOf(value) >= 0; });
    }
    function update() {
      dependent.forEach(function (set) {
        var visible = shown(set);
        set.hidden = !visible;
        set.disabled = !visible;
      });
    }
    form.addEventListener("change", update);
    update();
  }

  Array.prototype.forEach.call(document.querySelectorAll("form"), function (form) {
    var dependent = Array.prototype.slice.call(form.querySelectorAll("fieldset[data-show-if]"));
    if (dependent.length) follow(form, dependent);
  });
})();
