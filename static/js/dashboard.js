// Recompute button: start the reports job without leaving the page, show its progress,
// reload when the new reports are stored.
(function () {
  const form = document.querySelector("form.recompute");
  if (!form) return;
  const button = form.querySelector("button");
  const box = form.querySelector(".job");
  const bar = box.querySelector("progress");
  const message = box.querySelector(".job-message");

  function show(job) {
    box.hidden = false;
    bar.value = job.percent || 0;
    message.textContent = job.message || "Waiting for a worker…";
  }

  function poll() {
    fetch(form.dataset.statusUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then((response) => response.json())
      .then((job) => {
        if (job.status === "done") { window.location.reload(); return; }
        if (job.status === "failed" || job.status === "cancelled") {
          message.textContent = job.status === "failed" ? "Failed: " + job.error : "Cancelled.";
          button.disabled = false;
          return;
        }
        show(job);
        window.setTimeout(poll, 1500);
      })
      .catch(() => window.setTimeout(poll, 5000));
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    button.disabled = true;
    show({ percent: 0, message: "Starting…" });
    fetch(form.action, {
      method: "POST",
      body: new FormData(form),
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    })
      .then((response) => response.json())
      .then((job) => (job.status === "done" ? window.location.reload() : poll()))
      .catch(() => { button.disabled = false; message.textContent = "Could not start the job."; });
  });

  if (form.dataset.active === "true") poll();
})();
