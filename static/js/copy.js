// Copy buttons: <button data-copy="#selector"> copies that element's text. Shown only when the
// clipboard can be used; without JavaScript the text stays selectable.
(function () {
  if (!navigator.clipboard) return;
  document.querySelectorAll("[data-copy]").forEach(function (button) {
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", function () {
      var source = document.querySelector(button.dataset.copy);
      if (!source) return;
      navigator.clipboard.writeText(source.textContent.trim()).then(function () {
        button.textContent = button.dataset.copied || "✓";
        setTimeout(function () { button.textContent = label; }, 1500);
      });
    });
  });
})();
