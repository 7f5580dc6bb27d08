// Buttons with data-confirm ask before their form is sent (site-wide actions such as Block).
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-confirm]");
  if (button && !window.confirm(button.dataset.confirm)) {
    event.preventDefault();
  }
});
