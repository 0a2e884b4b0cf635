// The import form: only the chosen service's instructions, the paste box for saved memories
// only, and the upload's progress. Without JavaScript every part shows and works.
(function () {
  "use strict";
  function sync(form) {
    var checked = form.querySelector("input[name=source]:checked");
    var source = checked ? checked.value : "";
    form.querySelectorAll("[data-source-help], [data-source-only]").forEach(function (element) {
      var wanted = element.getAttribute("data-source-help") || element.getAttribute("data-source-only");
      element.hidden = wanted !== source;
    });
  }
  function syncAll() {
    document.querySelectorAll("[data-import-form]").forEach(sync);
  }
  document.addEventListener("change", function (event) {
    var form = event.target.closest && event.target.closest("[data-import-form]");
    if (form && event.target.name === "source") sync(form);
  });
  document.addEventListener("DOMContentLoaded", syncAll);
  document.addEventListener("htmx:afterSettle", syncAll);
  document.addEventListener("htmx:xhr:progress", function (event) {
    var form = event.target.closest && event.target.closest("[data-import-form]");
    var bar = form && form.querySelector(".upload-progress");
    if (!bar || !event.detail.lengthComputable) return;
    bar.hidden = false;
    bar.value = Math.round((100 * event.detail.loaded) / event.detail.total);
  });
  document.addEventListener("htmx:beforeRequest", function (event) {
    var form = event.target.closest && event.target.closest("[data-import-form]");
    var button = form && form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
  });
})();
