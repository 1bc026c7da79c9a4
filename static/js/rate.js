/* Keyboard rating for the staged screening form (templates/screening/idea_rate.html).
 *
 * Number keys score the highlighted dimension and move to the next open one; y / n answer its
 * yes/no questions; s skips an optional dimension; Enter submits once every open stage is
 * filled in. Each answer posts the form with htmx (the server decides which stages open), so
 * keys that arrive while a request is in flight wait in a queue and are replayed, in order,
 * once the new stages are on the page: no keystroke is lost. Keys typed into text fields are
 * left alone.
 */
(function () {
  "use strict";
  const form = document.getElementById("rating-form");
  if (!form) return;
  const status = document.getElementById("key-status");
  // Looked up when needed: save-retry.js may replace the form's contents (a refused save).
  function submitButton() { return form.querySelector("button[name=action][value=submit].primary"); }
  // With JavaScript on, the no-JS "Continue" button must never be the form's default button:
  // a disabled default button makes the browser ignore Enter instead of posting "continue".
  function disableNoJsButtons() {
    form.querySelectorAll("button.scr-nojs").forEach(function (b) { b.disabled = true; });
  }
  disableNoJsButtons();
  // A score or a yes/no answer posts the form (hx-trigger="stage-change"); text fields do not.
  // Filtered here rather than with an htmx trigger filter, which htmx evaluates as code and the
  // Content-Security-Policy (no 'unsafe-eval') forbids.
  form.addEventListener("change", function (event) {
    const type = event.target.type;
    if ((type === "radio" || type === "checkbox") && window.htmx) window.htmx.trigger(form, "stage-change");
  });

  const queue = [];
  let inFlight = 0;
  let waiting = false;   // a key changed an answer: hold further keys until the swap settles
  let advanceFrom = null; // after the swap, move on from this dimension
  let current = null;     // key of the highlighted dimension

  function say(text) { if (status) status.textContent = text || ""; }
  function dims() { return Array.from(document.querySelectorAll("#stages .scr-dim")); }
  function dimEl(key) { return key ? document.getElementById("dim-" + key) : null; }
  function stages() { return document.getElementById("stages"); }

  function isFilled(el) {
    if (el.querySelector("input[name^='skip-']:checked")) return true;
    const questions = el.querySelectorAll(".scr-question");
    if (questions.length) {
      return Array.from(questions).every(function (q) { return q.querySelector("input:checked"); });
    }
    return !!el.querySelector(".scr-levels input:checked");
  }

  function focusTarget(el) {
    const unanswered = Array.from(el.querySelectorAll(".scr-question")).find(function (q) {
      return !q.querySelector("input:checked");
    });
    if (unanswered) return unanswered.querySelector("input[type=radio]");
    return el.querySelector("input[type=radio]:checked") || el.querySelector("input[type=radio]");
  }

  function highlight(el, move) {
    dims().forEach(function (d) { d.classList.toggle("is-current", d === el); });
    current = el ? el.dataset.dimension : null;
    if (el && move) {
      const target = focusTarget(el);
      if (target) target.focus({ preventScroll: true });
      el.scrollIntoView({ block: "nearest" });
    }
  }

  function firstMissing() {
    return dims().find(function (d) { return !isFilled(d); }) || null;
  }

  function currentDim() {
    const active = document.activeElement;
    const inside = active && active.closest ? active.closest("#stages .scr-dim") : null;
    return inside || dimEl(current) || firstMissing() || dims()[0] || null;
  }

  function change(input) {
    waiting = true;
    input.checked = !(input.type === "checkbox" && input.checked);
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function advance() {
    const all = dims();
    const from = dimEl(advanceFrom);
    advanceFrom = null;
    const index = all.indexOf(from);
    const next = index >= 0 && index + 1 < all.length ? all[index + 1] : null;
    if (next) {
      highlight(next, true);
    } else if (stages() && stages().dataset.complete === "true") {
      highlight(from, true);
      say("Everything is filled in: press Enter to submit.");
    } else {
      highlight(firstMissing() || from, true);
    }
  }

  function handle(key) {
    const el = currentDim();
    if (key === "Enter") {
      const box = stages();
      if (box && box.dataset.complete === "true") {
        say("Submitting…");
        form.requestSubmit(submitButton());
      } else {
        say("Still to rate: " + (box ? box.dataset.missing : "") + ".");
        highlight(firstMissing(), true);
      }
      return;
    }
    if (!el) return;
    const name = el.querySelector(".scr-dim-head h3").firstChild.textContent.trim();
    if (key === "s") {
      const skip = el.querySelector("input[name^='skip-']");
      if (!skip) { say(name + " is not optional: it needs a score."); return; }
      say("");
      advanceFrom = skip.checked ? null : el.dataset.dimension;
      change(skip);
      return;
    }
    if (key === "y" || key === "n") {
      const questions = Array.from(el.querySelectorAll(".scr-question"));
      if (!questions.length) { say(name + " is scored with a number key."); return; }
      const active = document.activeElement;
      let question = active && active.closest ? active.closest(".scr-question") : null;
      if (!question || !el.contains(question)) {
        question = questions.find(function (q) { return !q.querySelector("input:checked"); })
          || questions[0];
      }
      const radio = question.querySelector("input[value=" + (key === "y" ? "yes" : "no") + "]");
      const later = questions.slice(questions.indexOf(question) + 1).find(function (q) {
        return !q.querySelector("input:checked");
      });
      say("");
      change(radio);
      if (later) {
        later.querySelector("input[type=radio]").focus({ preventScroll: true });
      } else {
        advanceFrom = el.dataset.dimension;
      }
      return;
    }
    const radio = el.querySelector(".scr-levels input[value='" + key + "']");
    if (!radio) {
      say(el.querySelector(".scr-question") ? name + " is answered with y / n."
        : name + " has no level " + key + ".");
      return;
    }
    say("");
    advanceFrom = el.dataset.dimension;
    if (radio.checked) {
      advance(); // the same score again: nothing to post, just move on
      return;
    }
    radio.focus({ preventScroll: true });
    change(radio);
  }

  function drain() {
    if (inFlight > 0) return;
    waiting = false;
    if (advanceFrom) advance();
    while (queue.length && !waiting) handle(queue.shift());
  }

  function wanted(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return null;
    const target = event.target;
    if (target.closest && target.closest("textarea, input[type=text], select, [contenteditable]")) return null;
    if (target.closest && target.closest("button, a, summary")) return null;
    if (!(target === document.body || form.contains(target))) return null;
    if (event.key === "Enter") return "Enter";
    if (/^[0-9]$/.test(event.key)) return event.key;
    const lower = event.key.toLowerCase();
    if (lower === "y" || lower === "n" || lower === "s") return lower;
    return null;
  }

  document.addEventListener("keydown", function (event) {
    const key = wanted(event);
    if (!key) return;
    event.preventDefault();
    if (waiting || inFlight > 0 || queue.length) {
      queue.push(key);
    } else {
      handle(key);
    }
  });

  document.body.addEventListener("htmx:beforeRequest", function () { inFlight += 1; });
  document.body.addEventListener("htmx:afterRequest", function (event) {
    inFlight = Math.max(0, inFlight - 1);
    if (!event.detail.successful) drain();
  });
  document.body.addEventListener("htmx:afterSettle", function () {
    const el = dimEl(current);
    highlight(el, false);
    // A swap can take focus away with the replaced nodes; give it back to the same dimension.
    if (el && (document.activeElement === document.body || !document.activeElement)) {
      const target = focusTarget(el);
      if (target) target.focus({ preventScroll: true });
    }
    drain();
  });
  // The form came back from a save (save-retry.js): the same set-up for its new contents.
  form.addEventListener("save-retry:replaced", function () {
    disableNoJsButtons();
    highlight(dimEl(current) || firstMissing(), false);
  });
  // A click moves the highlight too, so the keys continue from where the mouse left off.
  form.addEventListener("focusin", function (event) {
    const el = event.target.closest ? event.target.closest("#stages .scr-dim") : null;
    if (el) highlight(el, false);
  });

  const start = firstMissing() || dims()[0];
  // Focus (and scroll to) the first dimension only where the keys are the way to rate: with a
  // fine pointer, on a layout that shows the idea beside the form. On a phone the form sits
  // below the idea, and jumping to the first radio button would skip the text to be judged.
  const keyboardFirst = window.matchMedia("(hover: hover) and (pointer: fine) and (min-width: 961px)").matches;
  if (start && !document.getElementById("confirm-box")) highlight(start, keyboardFirst);
})();
