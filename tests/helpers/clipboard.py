"""A paste into the page's free-text field as Chromium delivers one from the clipboard: the
paste event, then the text inserted (the browser test of the authenticity signals and
``bench/authenticity.py`` paste the same way)."""

PASTE = """([text]) => {
  const field = document.querySelector('textarea[name="q-why"]');
  field.focus();
  const data = new DataTransfer();
  data.setData("text/plain", text);
  field.dispatchEvent(new ClipboardEvent("paste", {clipboardData: data, bubbles: true, cancelable: true}));
  document.execCommand("insertText", false, text);
}"""
