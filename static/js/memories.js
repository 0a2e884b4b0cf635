// Small behaviours of the memories page. Everything works without them (plain forms and links).
(function () {
  "use strict";
  var TOAST_MILLISECONDS = 10000;

  function armToasts() {
    document.querySelectorAll("[data-toast]:not([data-armed])").forEach(function (toast) {
      toast.setAttribute("data-armed", "");
      setTimeout(function () { toast.remove(); }, TOAST_MILLISECONDS);
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-js-only]").forEach(function (element) { element.hidden = false; });
    var toasts = document.getElementById("toasts");
    if (toasts) {
      new MutationObserver(armToasts).observe(toasts, { childList: true, subtree: true });
    }
    armToasts();
  });

  document.addEventListener("htmx:afterSettle", function () {
    document.querySelectorAll("[data-js-only]").forEach(function (element) { element.hidden = false; });
  });

  document.addEventListener("click", function (event) {
    var closePanel = event.target.closest("[data-close-panel]");
    var panel = closePanel && closePanel.closest(".memory-panel, .clear-panel");
    if (panel) {
      event.preventDefault();
      panel.innerHTML = "";
      return;
    }
    var closeToast = event.target.closest("[data-close-toast]");
    if (closeToast) {
      closeToast.closest("[data-toast]").remove();
    }
    if (event.target.closest("[data-clear-search]")) {
      var search = document.getElementById("memory-search");
      if (search) { search.value = ""; }
    }
  });

  document.addEventListener("change", function (event) {
    var target = event.target;
    if (target.matches("[data-autosubmit]")) {
      target.form.submit();
    }
    if (target.matches("[data-select-page]")) {
      document.querySelectorAll("input[name=ids][form=memory-bulk]").forEach(function (box) {
        box.checked = target.checked;
      });
    }
  });
})();
