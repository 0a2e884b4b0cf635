// Small behaviours of every page; each control also works as a plain form without it.
(function () {
  "use strict";
  // The language menu submits as soon as a language is picked.
  document.addEventListener("change", function (event) {
    var select = event.target.closest && event.target.closest("[data-submit-on-change]");
    if (select && select.form) select.form.submit();
  });
  // The phone menu button tells assistive technology whether the menu is open.
  document.addEventListener("change", function (event) {
    if (event.target.id !== "nav-toggle") return;
    var button = document.querySelector("label[for=nav-toggle]");
    if (button) button.setAttribute("aria-expanded", String(event.target.checked));
  });
})();
