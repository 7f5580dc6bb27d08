// The jobs page: poll the status endpoint every few seconds while a job is still going.
(function () {
  "use strict";
  var root = document.getElementById("jobs");
  if (!root) return;
  var url = root.getAttribute("data-status-url");
  var EVERY_MS = 2000;

  function pendingRows() {
    return Array.prototype.slice.call(root.querySelectorAll('tr[data-job-id][data-finished="0"]'));
  }

  function show(row, job) {
    var bar = row.querySelector("progress");
    bar.max = Math.max(job.total, 1);
    bar.value = job.total ? job.done : (job.status === "done" ? 1 : 0);
    row.querySelector('[data-field="count"]').textContent = job.done + " / " + job.total + " (" + job.percent + "%)";
    row.querySelector('[data-field="message"]').textContent = job.message;
    var status = row.querySelector('[data-field="status"]');
    status.textContent = job.status_label;
    status.className = "job-status status-" + job.status;
    row.querySelector('[data-field="started_at"]').textContent = job.started_at || "—";
    row.querySelector('[data-field="finished_at"]').textContent = job.finished_at || "—";
    if (job.finished) row.setAttribute("data-finished", "1");
  }

  function poll() {
    var rows = pendingRows();
    if (!rows.length) return;
    var ids = rows.map(function (row) { return row.getAttribute("data-job-id"); });
    fetch(url + "?ids=" + ids.join(","), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : { jobs: [] }; })
      .then(function (data) {
        data.jobs.forEach(function (job) {
          var row = root.querySelector('tr[data-job-id="' + job.id + '"]');
          if (row) show(row, job);
        });
      })
      .catch(function () { /* the next poll tries again */ })
      .then(function () { if (pendingRows().length) window.setTimeout(poll, EVERY_MS); });
  }

  window.setTimeout(poll, EVERY_MS);
})();
