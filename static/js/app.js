/* sysprompt: behaviour shared by every page.
 *
 * - Forms with data-confirm ask in the page's own <dialog id="confirm-dialog"> before
 *   they submit (never window.confirm).
 * - htmx swaps the error partials the views mark with X-Sysprompt-Partial (a refused
 *   save, a conflict), and reports any other failure in a banner instead of failing
 *   silently (a CSRF or server error page is never swapped into the editor).
 */
(() => {
  "use strict";

  function confirmThen(form) {
    const dialog = document.getElementById("confirm-dialog");
    if (!dialog) return form.submit();
    dialog.querySelector("#confirm-message").textContent = form.dataset.confirm;
    dialog.querySelector("#confirm-accept").textContent = form.dataset.confirmLabel || "Confirm";
    dialog.returnValue = "";
    dialog.addEventListener(
      "close",
      () => {
        if (dialog.returnValue === "confirm") {
          form.dataset.confirmed = "true";
          form.requestSubmit();
        }
      },
      { once: true },
    );
    dialog.showModal();
  }

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.confirm) return;
    if (form.dataset.confirmed === "true") {
      delete form.dataset.confirmed;
      return;
    }
    event.preventDefault();
    confirmThen(form);
  });

  function banner(message) {
    let box = document.getElementById("request-error");
    if (!box) {
      box = document.createElement("div");
      box.id = "request-error";
      box.className = "request-error";
      box.setAttribute("role", "alert");
      document.body.append(box);
    }
    box.textContent = message;
    box.hidden = false;
    clearTimeout(banner.timer);
    banner.timer = setTimeout(() => {
      box.hidden = true;
    }, 8000);
  }

  document.addEventListener("htmx:beforeSwap", (event) => {
    const xhr = event.detail.xhr;
    if (xhr.status < 400) return;
    const partial = xhr.getResponseHeader("X-Sysprompt-Partial") === "1";
    event.detail.shouldSwap = partial;
    event.detail.isError = !partial;
  });

  document.addEventListener("htmx:responseError", (event) => {
    const status = event.detail.xhr.status;
    banner(
      status === 403
        ? "Not allowed (403): your session may have expired; reload the page and log in."
        : `The server answered ${status}; nothing was changed. Try again in a moment.`,
    );
  });
  document.addEventListener("htmx:sendError", () => {
    banner("The server cannot be reached; nothing was changed. Check your connection.");
  });
})();
