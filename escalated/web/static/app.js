// escalated web app: live updates and keyboard shortcuts. Everything works
// without this file; it only saves reloads and mouse trips.
(function () {
  "use strict";

  // -- times: the server writes UTC; show each in the reader's time zone, UTC on hover --
  function localTimes(root) {
    (root || document).querySelectorAll("time[datetime]").forEach(function (t) {
      var at = new Date(t.getAttribute("datetime"));
      if (isNaN(at)) return;
      t.textContent = at.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
      t.dataset.local = "1";
    });
  }
  localTimes();

  // -- live: the page fetches itself again when something it shows changed --
  // Parts of a page that change: each has an id and the class "live".
  function liveRegion() { return document.querySelector(".live[data-live]"); }

  async function refresh() {
    var resp = await fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } });
    if (!resp.ok) return;
    var doc = new DOMParser().parseFromString(await resp.text(), "text/html");
    var selected = selectedId();
    document.querySelectorAll(".live").forEach(function (part) {
      var fresh = doc.getElementById(part.id);
      if (fresh) { part.replaceWith(fresh); localTimes(fresh); }
    });
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

  // SLA countdowns are written by the server in words; fetch them fresh now and then.
  if (liveRegion()) {
    setInterval(function () { if (!document.hidden) refresh(); }, 30000);
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

  function csrf() {
    var field = document.querySelector("input[name=csrf]");
    return field ? field.value : "";
  }
  // In the inbox, a/d/c act on the selected row, as in the terminal UI.
  function onSelected(key) {
    var row = document.querySelector(".row.selected");
    if (!row) return false;
    var page = row.querySelector("a.row-link").getAttribute("href");  // the server spells the path
    if (key === "a") {
      var form = document.createElement("form");
      form.method = "post";
      form.action = page + "/acknowledge";
      var field = document.createElement("input");
      field.type = "hidden"; field.name = "csrf"; field.value = csrf();
      form.appendChild(field);
      document.body.appendChild(form);
      form.submit();
    } else {
      window.location.href = page + (key === "d" ? "#decide" : "#cancel");
    }
    return true;
  }
  function act(key) {
    if (document.body.dataset.page === "inbox") return onSelected(key);
    if (key === "a") {
      var ack = document.getElementById("ack-form");
      if (ack) ack.requestSubmit();
      return !!ack;
    }
    return focusFirst(key === "d" ? "#decide-form input[name=choice]" : "#cancel-reason");
  }
  if (window.location.hash === "#decide") focusFirst("#decide-form input[name=choice]");
  if (window.location.hash === "#cancel") focusFirst("#cancel-reason");

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    var handled = true;
    switch (event.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "/": handled = focusFirst("#q"); break;
      case "a": case "d": case "c": handled = act(event.key); break;
      default: handled = false;
    }
    if (handled) event.preventDefault();
  });
})();
