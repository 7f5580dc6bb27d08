// Error-span questions (kinds/spans.py): the passage is drawn as tokens, each with its
// character offsets from the server (data-start, data-end), so a span's offsets are the
// server's own, never the browser's string indices. A selection is a run of words:
// - mouse: press on a word and drag to another;
// - touch: tap the first word, then the last (tap once more to start again);
// - keyboard: Tab into the text, ← → move by word, Shift + ← → extend, Home / End, Esc clears.
// Enter in the text (or the button) marks the selection with the chosen category and
// severity; each marked span is listed with a Remove button. The spans travel as JSON in
// the question's hidden field; the server checks them again (inside the text, categories,
// overlaps).
(function () {
  "use strict";

  function setup(root) {
    var text = root.querySelector("[data-span-text]");
    var field = root.querySelector("[data-span-field]");
    if (!text || !field || text.dataset.ready) return;
    text.dataset.ready = "1";
    var tokens = Array.prototype.slice.call(text.querySelectorAll(".tok"));
    var words = [];
    var wordOf = tokens.map(function (token, i) {
      if (!token.classList.contains("sp")) words.push(i);
      return Math.max(words.length - 1, 0);
    });
    var list = root.querySelector("[data-span-list]");
    var status = root.querySelector("[data-span-status]");
    var category = root.querySelector("[data-span-category]");
    var severity = root.querySelector("[data-span-severity]");
    var overlap = field.getAttribute("data-overlap") === "1";
    var severities = Array.prototype.map.call(severity.options, function (o) { return o.value; });
    var spans = [];
    try { spans = JSON.parse(field.value || "[]"); } catch (e) { spans = []; }
    if (!Array.isArray(spans)) spans = [];
    var anchor = null, caret = null, tapOpen = false, dragging = false, pointer = "mouse";

    function start(token) { return +token.getAttribute("data-start"); }
    function end(token) { return +token.getAttribute("data-end"); }
    function selection() {
      if (anchor === null || !words.length) return null;
      var lo = Math.min(anchor, caret), hi = Math.max(anchor, caret);
      return { start: start(tokens[words[lo]]), end: end(tokens[words[hi]]) };
    }
    function covered(a, b) {
      return tokens.filter(function (t) { return start(t) < b && a < end(t); })
        .map(function (t) { return t.textContent; }).join("").trim();
    }
    function paint() {
      var chosen = selection();
      tokens.forEach(function (token) {
        var s = start(token), e = end(token);
        var worst = -1;
        spans.forEach(function (span) {
          if (span.start < e && s < span.end) worst = Math.max(worst, severities.indexOf(span.severity));
        });
        token.classList.toggle("marked", worst >= 0);
        token.setAttribute("data-severity", worst >= 0 ? String(worst) : "");
        token.classList.toggle("selected", !!chosen && chosen.start <= s && e <= chosen.end);
        token.classList.toggle("caret", caret !== null && token === tokens[words[caret]]);
      });
    }
    function say(message) { if (status) status.textContent = message; }
    function selected() {
      var chosen = selection();
      say(chosen ? "“" + covered(chosen.start, chosen.end) + "”" : "");
    }
    function save() {
      spans.sort(function (a, b) { return a.start - b.start || a.end - b.end; });
      field.value = JSON.stringify(spans);
      list.textContent = "";
      spans.forEach(function (span, n) {
        var item = document.createElement("li");
        var quote = document.createElement("q");
        quote.textContent = covered(span.start, span.end);
        item.appendChild(quote);
        item.appendChild(document.createTextNode(" " + span.category + ", " + span.severity + " "));
        var remove = document.createElement("button");
        remove.type = "button";
        remove.className = "button-link";
        remove.textContent = field.getAttribute("data-remove-label");
        remove.addEventListener("click", function () { spans.splice(n, 1); save(); text.focus(); });
        item.appendChild(remove);
        list.appendChild(item);
      });
      paint();
    }
    function mark() {
      var chosen = selection();
      if (!chosen) { say(field.getAttribute("data-none")); return; }
      var span = { start: chosen.start, end: chosen.end, category: category.value, severity: severity.value };
      var clash = spans.filter(function (s) {
        return overlap ? s.start === span.start && s.end === span.end && s.category === span.category &&
          s.severity === span.severity : s.start < span.end && span.start < s.end;
      });
      if (clash.length) {
        say(field.getAttribute(overlap ? "data-twice" : "data-overlapping"));
        return;
      }
      spans.push(span);
      anchor = null; tapOpen = false;
      save();
      say(field.getAttribute("data-marked").replace("{text}", covered(span.start, span.end))
        .replace("{category}", span.category).replace("{severity}", span.severity));
    }
    function wordAt(target) {
      var token = target && target.closest ? target.closest(".tok") : null;
      var index = token ? tokens.indexOf(token) : -1;
      return index < 0 || !words.length ? null : wordOf[index];
    }

    text.addEventListener("pointerdown", function (event) {
      pointer = event.pointerType || "mouse";
      var w = wordAt(event.target);
      if (pointer !== "mouse" || w === null || event.button !== 0) return;
      event.preventDefault(); // no native text selection: ours is by word
      text.focus({ preventScroll: true });
      anchor = caret = w; dragging = true; tapOpen = false;
      paint(); selected();
    });
    text.addEventListener("pointerover", function (event) {
      var w = wordAt(event.target);
      if (!dragging || w === null) return;
      caret = w; paint(); selected();
    });
    document.addEventListener("pointerup", function () { dragging = false; });
    text.addEventListener("click", function (event) {
      var w = wordAt(event.target);
      if (pointer === "mouse" || w === null) return;
      if (!tapOpen) { anchor = caret = w; tapOpen = true; } else { caret = w; tapOpen = false; }
      paint(); selected();
    });
    text.addEventListener("keydown", function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      var last = words.length - 1, to = null;
      if (event.key === "ArrowRight") to = caret === null ? 0 : Math.min(caret + 1, last);
      else if (event.key === "ArrowLeft") to = caret === null ? last : Math.max(caret - 1, 0);
      else if (event.key === "Home") to = 0;
      else if (event.key === "End") to = last;
      if (to !== null && last >= 0) {
        event.preventDefault();
        if (event.shiftKey && anchor !== null) caret = to; else anchor = caret = to;
        paint(); selected();
        return;
      }
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        event.stopPropagation(); // Enter here marks; it does not submit the page (keys.js)
        mark();
      } else if (event.key === "Escape") {
        anchor = caret = null; tapOpen = false; paint(); selected();
      }
    });
    root.querySelector("[data-span-mark]").addEventListener("click", mark);
    save();
  }

  Array.prototype.forEach.call(document.querySelectorAll("fieldset.question-spans"), setup);
})();
