// The invitation link carries its token in the fragment (#…), which the browser never sends:
// read it here, take it out of the address bar, and post it with the page's form, so the token
// reaches the server in a request body only (no access log, proxy or Referer sees it).
(function () {
  var form = document.getElementById("join-token-form");
  var token = window.location.hash.slice(1);
  if (!form || !token) return;
  history.replaceState(null, "", window.location.pathname + window.location.search);
  document.getElementById("join-token").value = decodeURIComponent(token);
  document.getElementById("join-token-field").hidden = true;
  document.getElementById("join-token-send").hidden = true;
  document.getElementById("join-token-reading").hidden = false;
  form.submit();
})();
