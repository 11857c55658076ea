// escalated web app: live updates and keyboard shortcuts. Everything works
// without this file; it only saves reloads and mouse trips.
(function () {
  "use strict";

  // -- live: the page fetches itself again when something it shows changed --
  function liveRegion() { return document.getElementById("live-region"); }

  async function refresh() {
    var region = liveRegion();
    if (!region) return;
    var resp = await fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } });
    if (!resp.ok) return;
    var doc = new DOMParser().parseFromString(await resp.text(), "text/html");
    var fresh = doc.getElementById("live-region");
    if (!fresh) return;
    var selected = selectedId();
    region.replaceWith(fresh);
    // A closed escalation has no forms left to fill: drop them too.
    var actions = document.getElementById("actions");
    if (actions && !doc.getElementById("actions")) actions.remove();
    if (selected) select(rows().findIndex(function (r) { return r.dataset.id === selected; }));
  }

  function onChange(message) {
    var region = liveRegion();
    if (!region) return;
    var change = JSON.parse(message.data);
    if (region.dataset.live === "escalation" && region.dataset.id !== change.id) return;
    refresh();
  }

  if (window.EventSource && liveRegion()) {
    var source = new EventSource("/app/events");
    source.addEventListener("change", onChange);
    // Tests and people can tell a live page from a stale one.
    source.addEventListener("open", function () { document.body.dataset.live = "connected"; });
    source.addEventListener("error", function () { document.body.dataset.live = "reconnecting"; });
  }

  // -- keys, as in the terminal UI --
  function rows() { return Array.prototype.slice.call(document.querySelectorAll(".row")); }
  function selectedId() { var r = document.querySelector(".row.selected"); return r ? r.dataset.id : null; }
  function select(i) {
    var all = rows();
    if (!all.length || i < 0) return;
    i = Math.min(i, all.length - 1);
    all.forEach(function (r) { r.classList.remove("selected"); });
    all[i].classList.add("selected");
    all[i].querySelector("a").focus();
  }
  function move(step) {
    var all = rows();
    var i = all.findIndex(function (r) { return r.classList.contains("selected"); });
    select(i < 0 ? 0 : i + step);
  }
  function typing(target) {
    return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  }
  function focusFirst(selector) {
    var el = document.querySelector(selector);
    if (el) { el.scrollIntoView({ block: "center" }); el.focus(); }
    return !!el;
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    var handled = true;
    switch (event.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "/": handled = focusFirst("#q"); break;
      case "a": {
        var ack = document.getElementById("ack-form");
        if (ack) ack.requestSubmit(); else handled = false;
        break;
      }
      case "d": handled = focusFirst("#decide-form input[name=choice]"); break;
      case "c": handled = focusFirst("#cancel-reason"); break;
      default: handled = false;
    }
    if (handled) event.preventDefault();
  });
})();
