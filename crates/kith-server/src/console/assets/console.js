// kith console: a little behaviour on top of plain forms (every page works without it).
"use strict";
document.addEventListener("submit", (event) => {
  const form = event.target;
  // A form that forgets or undoes asks first.
  const question = form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
    return;
  }
  // One click, one request: a second click while the page loads sends nothing.
  for (const button of form.querySelectorAll("button[type=submit]")) {
    button.disabled = true;
  }
});
// "/" focuses the page's search box, as on many sites.
document.addEventListener("keydown", (event) => {
  if (event.key !== "/" || event.target.closest("input, textarea, select")) return;
  const box = document.querySelector("input[type=search]");
  if (box) {
    event.preventDefault();
    box.focus();
  }
});
