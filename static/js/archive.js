/* The archive download (templates/dataio/archive.html): building the zip takes seconds on a
 * large installation and the browser shows nothing until the file arrives, so the page says
 * what is happening. The server answers with a cookie carrying the form's token; when it
 * appears, the download has started. */
(function () {
  "use strict";
  const form = document.getElementById("archive-export");
  if (!form) return;
  const status = document.getElementById("archive-export-status");
  const text = status.querySelector(".archive-export-text");
  const spinner = status.querySelector(".spinner");
  const button = form.querySelector("button[type=submit]");
  let timer = null;

  function cookie(name) {
    const hit = document.cookie.split("; ").find(function (c) { return c.startsWith(name + "="); });
    return hit ? hit.slice(name.length + 1) : "";
  }

  form.addEventListener("submit", function () {
    const token = Math.random().toString(36).slice(2, 14) + Date.now().toString(36);
    form.elements.token.value = token;
    const started = Date.now();
    status.hidden = false;
    spinner.style.display = "inline-block";
    button.disabled = true;
    text.textContent = "Preparing the archive…";
    clearInterval(timer);
    timer = setInterval(function () {
      if (cookie("archive_download") === token) {
        clearInterval(timer);
        spinner.style.display = "none";
        button.disabled = false;
        text.textContent = "The archive is ready: your browser is downloading it.";
        return;
      }
      text.textContent = "Preparing the archive… " + Math.round((Date.now() - started) / 1000) + " s";
    }, 250);
  });
})();
