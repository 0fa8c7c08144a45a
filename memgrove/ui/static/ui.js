// memgrove's page script: folders open in place, "more" rows load in place, dangerous buttons
// ask first. No eval, no inline handlers (the page's CSP forbids both); the HTML it inserts is
// this server's own, rendered with every value escaped.
(function () {
  "use strict";

  function load(url, into, replace) {
    into.setAttribute("aria-busy", "true");
    return fetch(url, {credentials: "same-origin", headers: {"X-Requested-With": "memgrove-ui"}})
      .then(function (r) {
        if (r.status === 401 || r.redirected && r.url.indexOf("/ui/login") >= 0) {
          window.location.assign("/ui/login?next=" + encodeURIComponent(window.location.pathname + window.location.search));
          return null;
        }
        return r.text().then(function (html) { return {ok: r.ok, html: html}; });
      })
      .then(function (got) {
        if (!got) return;
        if (!got.ok) { into.textContent = "Could not load (" + got.html.slice(0, 200) + ")"; return; }
        if (replace) { into.outerHTML = got.html; } else { into.innerHTML = got.html; }
      })
      .catch(function (e) { into.textContent = "Could not load: " + e; })
      .finally(function () { if (into.isConnected) into.removeAttribute("aria-busy"); });
  }

  // a folder opened for the first time fetches its children; closing and opening again keeps them
  document.addEventListener("toggle", function (ev) {
    var d = ev.target;
    if (!(d instanceof HTMLDetailsElement) || !d.open || !d.dataset.src || d.dataset.loaded) return;
    d.dataset.loaded = "1";
    var box = d.querySelector(":scope > .children");
    if (box) load(d.dataset.src, box, false);
  }, true);

  document.addEventListener("click", function (ev) {
    var a = ev.target.closest && ev.target.closest("a[data-more]");
    if (!a) return;
    ev.preventDefault();
    load(a.dataset.more, a.closest(".more") || a, true);
  });

  document.addEventListener("submit", function (ev) {
    var f = ev.target;
    if (f.dataset && f.dataset.confirm && !window.confirm(f.dataset.confirm)) ev.preventDefault();
  }, true);

  document.addEventListener("change", function (ev) {
    var s = ev.target;
    if (s.matches && s.matches("select[data-submit]") && s.form) s.form.submit();
  });
})();
