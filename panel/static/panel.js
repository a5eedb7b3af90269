// Reloads the inbox when the pending requests change: polled each second.
(function () {
  var box = document.getElementById("pending");
  if (!box) return;
  var seen = box.getAttribute("data-fingerprint");
  setInterval(function () {
    if (document.activeElement && document.activeElement.tagName === "INPUT" && document.activeElement.value) return;
    fetch("/inbox/pending", { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (v) { if (v && v.fingerprint !== seen) location.replace("/inbox"); })
      .catch(function () {});
  }, 1000);
})();
