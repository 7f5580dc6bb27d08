// The study builder's question list: add a question (a copy of the page's <template>), remove
// one, move one up or down, and show only the fields of each question's type (each field's
// data-for-types, written from kinds/questions.py's TYPE_KEYS: no type is named here). The server
// reads the blocks in the page's order; without this script every field stays visible and
// the list can still be edited by hand.
(function () {
  "use strict";
  var list = document.getElementById("question-list");
  var template = document.getElementById("question-template");
  var add = document.getElementById("add-question");
  if (!list || !template) return;

  function blocks() { return Array.prototype.slice.call(list.querySelectorAll("[data-question-block]")); }

  function showTypeFields(block) {
    var type = block.querySelector("[data-type-select]").value;
    Array.prototype.forEach.call(block.querySelectorAll("[data-for-types]"), function (field) {
      field.hidden = field.getAttribute("data-for-types").split(" ").indexOf(type) < 0;
    });
  }

  function renumber() {
    blocks().forEach(function (block, index) {
      block.querySelector("[data-question-number]").textContent = String(index + 1);
      block.querySelector('[data-move="up"]').disabled = index === 0;
      block.querySelector('[data-move="down"]').disabled = index === blocks().length - 1;
      block.querySelector("[data-remove]").disabled = blocks().length === 1;
    });
  }

  list.addEventListener("change", function (event) {
    if (event.target.matches("[data-type-select]")) showTypeFields(event.target.closest("[data-question-block]"));
  });
  list.addEventListener("click", function (event) {
    var button = event.target.closest("button");
    if (!button) return;
    var block = button.closest("[data-question-block]");
    if (button.hasAttribute("data-remove")) {
      block.remove();
    } else if (button.getAttribute("data-move") === "up" && block.previousElementSibling) {
      list.insertBefore(block, block.previousElementSibling);
    } else if (button.getAttribute("data-move") === "down" && block.nextElementSibling) {
      list.insertBefore(block.nextElementSibling, block);
    }
    renumber();
  });
  if (add) {
    add.addEventListener("click", function () {
      var block = template.content.firstElementChild.cloneNode(true);
      list.appendChild(block);
      showTypeFields(block);
      renumber();
      block.querySelector('[name="q_id"]').focus();
    });
  }
  blocks().forEach(showTypeFields);
  renumber();
})();
