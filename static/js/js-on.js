/* Marks the page as scripted before it is drawn (CSS shows keyboard hints and hides no-JS
 * buttons under html.js). A file rather than an inline script: the Content-Security-Policy
 * allows scripts from this site only. Loaded without defer, in <head>, so nothing flickers. */
document.documentElement.classList.add("js");
