/* Keeps what a reviewer typed when the server cannot save it, and saves it once it can.
 *
 * For <form data-save-retry="STATUS-ID"> (the rating form, templates/screening/idea_rate.html):
 * its save (the submit button with name=action value=submit) is sent with fetch instead of a page
 * load, so the form and everything typed into it stay on the page whatever happens. Then:
 * - 503 (the database or the task queue is down: apps/core/health.py), 502/504 (a proxy in front
 *   says the same) or no answer at all: the element STATUS-ID says "Not saved yet" with the
 *   reason and a countdown, and the save is sent again after 2, 4, 8, then every 10 seconds,
 *   with whatever the form holds by then, until it gets through. "Try now" sends at once;
 * - the save went through: the server answers with the page to go to in X-Save-Retry-Location
 *   (apps/screening/views/rate.py), and the browser goes there, as after a normal submit;
 * - the server answered with the form again (a score missing, "please confirm"): the form's
 *   contents are replaced with the answer's, as a page load would have shown them;
 * - anything else (a page that is not this form): the answer is shown as the page.
 * Saving is idempotent (rating_submit stores nothing when the values are already stored), so a
 * save that arrived although its answer was lost is not stored twice when it is sent again.
 * A level that opens stages (htmx "stage-change") failing for the same reasons is retried too.
 */
(function () {
  "use strict";
  const form = document.querySelector("form[data-save-retry]");
  if (!form || !window.fetch || !window.FormData) return;
  const RETRYABLE = [502, 503, 504];
  const WHAT = {
    database: "its database",
    broker: "its task queue",
  };
  let saving = null;    // {name, value} of the save button while a save is unsaved
  let stagesFailed = false;
  let attempt = 0;
  let inFlight = false;
  let timer = null;
  let tick = null;

  function statusBox() { return document.getElementById(form.dataset.saveRetry); }

  function clearTimers() {
    clearTimeout(timer);
    clearInterval(tick);
    timer = tick = null;
  }

  function hide() {
    const box = statusBox();
    if (box) { box.hidden = true; box.replaceChildren(); }
    form.removeAttribute("data-save-state");
  }

  function show(text, withButton) {
    const box = statusBox();
    if (!box) return;
    const words = document.createElement("span");
    words.textContent = text;
    box.replaceChildren(words);
    if (withButton) {
      const now = document.createElement("button");
      now.type = "button";
      now.className = "linkish";
      now.textContent = "Try now";
      now.addEventListener("click", retryNow);
      box.append(" ", now);
    }
    box.hidden = false;
  }

  function failed(dependency) {
    attempt += 1;
    let left = Math.min(10, Math.pow(2, attempt));
    const reason = dependency && WHAT[dependency]
      ? "the server cannot reach " + WHAT[dependency]
      : "the server is not answering";
    function say() {
      if (saving) {
        show("Not saved yet: " + reason + ". Your answers stay on this page and are saved " +
          "automatically as soon as it is back; trying again in " + left + " s.", true);
      } else {
        show("The next stages cannot open yet: " + reason + ". Nothing you chose is lost; " +
          "trying again in " + left + " s.", true);
      }
    }
    form.setAttribute("data-save-state", saving ? "unsaved" : "stages-waiting");
    say();
    clearTimers();
    tick = setInterval(function () { left = Math.max(0, left - 1); say(); }, 1000);
    timer = setTimeout(retryNow, left * 1000);
  }

  function retryNow() {
    clearTimers();
    if (saving) {
      send();
    } else if (stagesFailed && window.htmx) {
      stagesFailed = false;
      window.htmx.trigger(form, "stage-change");
    }
  }

  function replaceForm(fresh) {
    form.replaceChildren.apply(form, Array.from(fresh.childNodes).map(function (node) {
      return document.importNode(node, true);
    }));
    if (window.htmx) window.htmx.process(form);
    form.dispatchEvent(new CustomEvent("save-retry:replaced", { bubbles: true }));
    const alert = form.querySelector("[role=alert]");
    if (alert) alert.scrollIntoView({ block: "center" });
  }

  function answered(response) {
    const location = response.headers.get("X-Save-Retry-Location");
    if (location) {
      window.location.assign(location);
      return null;
    }
    if (response.redirected) {  // e.g. signed out meanwhile: the sign-in page
      window.location.assign(response.url);
      return null;
    }
    return response.text().then(function (html) {
      const fresh = new DOMParser().parseFromString(html, "text/html").getElementById(form.id);
      if (fresh) {
        replaceForm(fresh);
      } else {
        document.open();
        document.write(html);
        document.close();
      }
    });
  }

  function send() {
    if (inFlight || !saving) return;
    inFlight = true;
    clearTimers();
    form.setAttribute("aria-busy", "true");
    const body = new FormData(form);
    body.append(saving.name, saving.value);
    if (attempt) show("Not saved yet: trying again…", false);
    // getAttribute: form.action would be the form's own field named "action" (the buttons).
    fetch(form.getAttribute("action") || window.location.pathname, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { "X-Save-Retry": String(attempt) },
    }).then(function (response) {
      inFlight = false;
      form.removeAttribute("aria-busy");
      if (RETRYABLE.indexOf(response.status) >= 0) {
        failed(response.headers.get("X-Unavailable"));
        return null;
      }
      saving = null;
      attempt = 0;
      hide();
      return answered(response);
    }, function () {
      inFlight = false;
      form.removeAttribute("aria-busy");
      failed(null);
    });
  }

  form.addEventListener("submit", function (event) {
    const submitter = event.submitter;
    if (!submitter || submitter.name !== "action" || submitter.value !== "submit") return;
    event.preventDefault();
    saving = { name: submitter.name, value: submitter.value };
    if (!inFlight) send();
  });

  // A changed level posts the form for the stages it opens (htmx): retried the same way.
  function stagesError(event) {
    if (saving) return;
    const xhr = event.detail && event.detail.xhr;
    const status = xhr ? xhr.status : 0;
    if (event.type === "htmx:sendError" || RETRYABLE.indexOf(status) >= 0) {
      stagesFailed = true;
      failed(xhr ? xhr.getResponseHeader("X-Unavailable") : null);
    }
  }
  form.addEventListener("htmx:responseError", stagesError);
  form.addEventListener("htmx:sendError", stagesError);
  form.addEventListener("htmx:afterRequest", function (event) {
    if (!saving && event.detail && event.detail.successful && stagesFailed === false) {
      if (form.getAttribute("data-save-state") === "stages-waiting") { attempt = 0; hide(); }
    }
  });
})();
