/* "Copy link" on the invitations page (templates/accounts/invitations.html). */
(function () {
  const button = document.getElementById("copy-link");
  if (!button || !navigator.clipboard) return;
  button.classList.remove("acc-js-only");
  button.addEventListener("click", function () {
    const input = document.querySelector(button.dataset.copy);
    navigator.clipboard.writeText(input.value).then(function () {
      document.getElementById("copy-status").textContent = "Copied.";
    }, function () {
      input.select();
      document.getElementById("copy-status").textContent = "Press Ctrl+C to copy.";
    });
  });
})();
/* The invitation link's field selects its text on focus, for copying by hand. */
document.querySelectorAll("[data-select-on-focus]").forEach(function (input) {
  input.addEventListener("focus", function () { input.select(); });
});
