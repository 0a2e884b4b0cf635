// The colour theme, before the page paints: the server already set data-theme from the
// cookie; a choice kept only in localStorage (cookie cleared) is applied and re-saved here.
(function () {
  "use strict";
  var root = document.documentElement;
  var THEMES = ["system", "light", "dark"];
  var stored = null;
  try { stored = window.localStorage.getItem("theme"); } catch (error) { /* storage off */ }
  if (stored && THEMES.indexOf(stored) !== -1 && document.cookie.indexOf("theme=") === -1) {
    root.setAttribute("data-theme", stored);
    document.cookie = "theme=" + stored + ";path=/;max-age=31536000;samesite=lax";
  }

  function choose(theme) {
    root.setAttribute("data-theme", theme);
    try { window.localStorage.setItem("theme", theme); } catch (error) { /* storage off */ }
    document.cookie = "theme=" + theme + ";path=/;max-age=31536000;samesite=lax";
    document.querySelectorAll("[data-theme-choice]").forEach(function (button) {
      button.setAttribute("aria-pressed", String(button.value === theme));
    });
  }

  // The switch is a plain form (it works without JavaScript); with it, no reload.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-theme-choice]");
    if (!button) return;
    event.preventDefault();
    choose(button.value);
  });
})();
