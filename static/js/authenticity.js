// Authenticity signals (docs/authenticity.md): for a form holding input[data-authenticity],
// count per text field (textarea, input[type=text]) keystrokes, characters typed, pastes and
// pasted characters (and those pasted after the page was hidden), and for the page the time
// it was hidden and the time to the first input. Never the text itself. The summary is kept
// in the hidden field as JSON at every change, so whatever posts the form (a plain submit or
// htmx's one-trip answer) sends the latest; the server bounds and checks it. The counts of a
// page survive a reload or a refused answer (sessionStorage, keyed by the form's address).
// Loaded again after each htmx swap: the first load sets up the page-wide listeners, each
// load looks for new forms; htmx:load finds the game's reason form when it is swapped in.
(function () {
  "use strict";
  if (window.roftAuthenticity) { window.roftAuthenticity.scan(document); return; }
  var STORE = "roft-authenticity:";
  var trackers = [];
  var hiddenSince = document.visibilityState === "hidden" ? Date.now() : null;

  function isText(el) {
    if (!el || !el.name) return false;
    if (el.tagName === "TEXTAREA") return true;
    return el.tagName === "INPUT" && (el.type || "text").toLowerCase() === "text";
  }

  function load(key) {
    try {
      var saved = JSON.parse(window.sessionStorage.getItem(STORE + key) || "null");
      if (saved && saved.v === 1 && saved.fields && typeof saved.t0 === "number") return saved;
    } catch (e) { /* no storage, or not ours: start afresh */ }
    return null;
  }

  function Tracker(form, field) {
    this.form = form;
    this.field = field;
    this.key = form.getAttribute("action") || window.location.pathname;
    var now = Date.now();
    this.state = load(this.key) || { v: 1, t0: now, fields: {}, hidden_ms: 0, hidden_count: 0, first_input_ms: null };
    try { // one page's counts at a time: forget the pages answered before
      for (var i = window.sessionStorage.length - 1; i >= 0; i--) {
        var name = window.sessionStorage.key(i);
        if (name && name.indexOf(STORE) === 0 && name !== STORE + this.key) window.sessionStorage.removeItem(name);
      }
    } catch (e) { /* no storage */ }
    var self = this;
    form.addEventListener("keydown", function (event) { self.on(event, "keys", 1); }, true);
    form.addEventListener("input", function (event) {
      var type = event.inputType || "";
      if (type === "insertText" || type === "insertLineBreak") {
        self.on(event, "typed", type === "insertLineBreak" ? 1 : (event.data || "").length);
      }
    }, true);
    form.addEventListener("paste", function (event) {
      var data = event.clipboardData ? event.clipboardData.getData("text") : "";
      self.pasted(event, data.length);
    }, true);
    form.addEventListener("drop", function (event) {
      var data = event.dataTransfer ? event.dataTransfer.getData("text") : "";
      self.pasted(event, data.length);
    }, true);
    form.addEventListener("submit", function () { self.write(); }, true);
    form.addEventListener("htmx:configRequest", function (event) {
      self.write();
      if (event.detail && event.detail.parameters) event.detail.parameters[field.name] = field.value;
    });
    this.write();
  }

  Tracker.prototype.counts = function (el) {
    var fields = this.state.fields;
    if (!fields[el.name]) fields[el.name] = { keys: 0, typed: 0, pastes: 0, pasted: 0, pasted_after_hidden: 0 };
    return fields[el.name];
  };

  Tracker.prototype.on = function (event, what, amount) {
    if (!isText(event.target)) return;
    if (this.state.first_input_ms === null) this.state.first_input_ms = Math.max(0, Date.now() - this.state.t0);
    this.counts(event.target)[what] += amount;
    this.write();
  };

  Tracker.prototype.pasted = function (event, chars) {
    if (!isText(event.target)) return;
    var counts = this.counts(event.target);
    counts.pastes += 1;
    counts.pasted += chars;
    if (this.state.hidden_count > 0) counts.pasted_after_hidden += chars;
    this.on(event, "pastes", 0);
  };

  Tracker.prototype.write = function () {
    var hidden = this.state.hidden_ms + (hiddenSince === null ? 0 : Date.now() - hiddenSince);
    var summary = {
      v: 1,
      fields: this.state.fields,
      hidden_ms: Math.round(hidden),
      hidden_count: this.state.hidden_count,
      first_input_ms: this.state.first_input_ms
    };
    this.field.value = JSON.stringify(summary);
    try { window.sessionStorage.setItem(STORE + this.key, JSON.stringify(this.state)); } catch (e) { /* full or off */ }
  };

  function live() {
    trackers = trackers.filter(function (t) { return document.contains(t.form); });
    return trackers;
  }

  document.addEventListener("visibilitychange", function () {
    var now = Date.now();
    if (document.visibilityState === "hidden") {
      if (hiddenSince === null) hiddenSince = now;
      live().forEach(function (t) { t.state.hidden_count += 1; t.write(); });
    } else if (hiddenSince !== null) {
      var away = now - hiddenSince;
      hiddenSince = null;
      live().forEach(function (t) { t.state.hidden_ms += away; t.write(); });
    }
  });

  function scan(root) {
    var fields = (root || document).querySelectorAll("input[data-authenticity]");
    for (var i = 0; i < fields.length; i++) {
      var field = fields[i];
      if (field.form && !field.form.hasAttribute("data-authenticity-on")) {
        field.form.setAttribute("data-authenticity-on", "");
        trackers.push(new Tracker(field.form, field));
      }
    }
  }

  window.roftAuthenticity = { scan: scan };
  document.addEventListener("htmx:load", function (event) { scan(event.target && event.target.querySelectorAll ? event.target : document); });
  scan(document);
})();
