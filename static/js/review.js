// Keyboard shortcuts for the review queue. Every action is a plain form; keys only press its button.
(function () {
  "use strict";

  function items() {
    return Array.prototype.slice.call(document.querySelectorAll(".review-item:not(.review-done)"));
  }

  function current() {
    var focused = document.activeElement && document.activeElement.closest(".review-item:not(.review-done)");
    return focused || items()[0] || null;
  }

  function move(step) {
    var all = items();
    if (!all.length) return;
    var index = all.indexOf(current());
    var next = all[Math.min(all.length - 1, Math.max(0, index + step))];
    next.focus();
    next.scrollIntoView({ block: "nearest" });
  }

  function press(item, shortcut) {
    var control = item && item.querySelector('[data-shortcut="' + shortcut + '"]');
    if (control) control.click();
  }

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (target.matches("input, textarea, select") && target.type !== "checkbox") return;
    var item = current();
    switch (event.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "a": press(item, "a"); break;
      case "r": press(item, "r"); break;
      case "e":
        press(item, "e");
        var textarea = item && item.querySelector("textarea");
        if (textarea) textarea.focus();
        break;
      case "x":
        var box = item && item.querySelector('input[type="checkbox"]');
        if (box) box.checked = !box.checked;
        break;
      default: return;
    }
    event.preventDefault();
  });

  // After htmx swaps in the verdict, keep the keyboard on the next memory.
  document.addEventListener("htmx:afterSwap", function () {
    if (!document.activeElement || document.activeElement === document.body) {
      var next = items()[0];
      if (next) next.focus();
    }
  });
})();
