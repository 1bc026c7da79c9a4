/* Small form behaviours without inline handlers (the Content-Security-Policy allows scripts from
 * this site only):
 * - <select data-autosubmit> submits its form when it changes;
 * - <input type="checkbox" data-check-all> checks or clears every checkbox in its table body, and
 *   follows them: ticked when all are, half-ticked when some are, clear when none is. */
document.addEventListener("change", function (event) {
  var el = event.target;
  if (el.matches("select[data-autosubmit]") && el.form) {
    el.form.requestSubmit ? el.form.requestSubmit() : el.form.submit();
  }
  if (el.matches("input[type=checkbox][data-check-all]")) {
    el.indeterminate = false;
    el.closest("table").querySelectorAll("tbody input[type=checkbox]").forEach(function (box) {
      box.checked = el.checked;
    });
  } else if (el.matches("tbody input[type=checkbox]")) {
    var table = el.closest("table");
    var all = table && table.querySelector("thead input[type=checkbox][data-check-all]");
    if (all) {
      var boxes = table.querySelectorAll("tbody input[type=checkbox]");
      var ticked = table.querySelectorAll("tbody input[type=checkbox]:checked").length;
      all.checked = ticked === boxes.length;
      all.indeterminate = ticked > 0 && ticked < boxes.length;
    }
  }
});
