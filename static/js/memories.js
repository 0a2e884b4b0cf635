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

  function openSettings() {
    var settings = document.getElementById("memory-settings-panel");
    if (settings) { settings.open = true; }
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (location.hash === "#memory-settings" || location.hash === "#memory-settings-panel") {
      openSettings();
    }
  });

  document.addEventListener("click", function (event) {
    // An open menu (a row's actions, "More") closes on a click outside it or on one of its items.
    document.querySelectorAll("details.memory-actions-menu[open], details.page-menu[open]").forEach(function (menu) {
      var summary = menu.querySelector("summary");
      if (!summary.contains(event.target)) { menu.open = false; }
    });
    if (event.target.closest("[data-open-settings]")) { openSettings(); }
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
