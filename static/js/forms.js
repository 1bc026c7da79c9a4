/* Small form behaviours without inline handlers (the Content-Security-Policy allows scripts from
 * this site only):
 * - <select data-autosubmit> submits its form when it changes;
 * - <input type="checkbox" data-check-all> checks or clears every checkbox in its table body. */
document.addEventListener("change", function (event) {
  var el = event.target;
  if (el.matches("select[data-autosubmit]") && el.form) {
    el.form.requestSubmit ? el.form.requestSubmit() : el.form.submit();
  }
  if (el.matches("input[type=checkbox][data-check-all]")) {
    el.closest("table").querySelectorAll("tbody input[type=checkbox]").forEach(function (box) {
      box.checked = el.checked;
    });
  }
});
