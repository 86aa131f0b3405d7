/* sysprompt: behaviour shared by every page.
 *
 * - Tab and Shift+Tab wrap around inside an open modal dialog: after its last control
 *   Chromium would move the focus out of the page, to its own toolbar.
 * - Forms with data-confirm ask in the page's own <dialog id="confirm-dialog"> before
 *   they submit (never window.confirm).
 * - A button with data-dialog="id" opens that <dialog> (one that holds its own forms,
 *   such as a rollback the gate refuses); a dialog with data-show-on-load opens as the
 *   page loads (the same dialog again, after the server refused what it sent).
 * - Buttons with data-copy="#id" copy that element's text (an agent host's token) and
 *   say so in the element named by data-copy-status; where the clipboard is refused,
 *   the text is selected instead, for Ctrl+C.
 * - htmx swaps the error partials the views mark with X-Sysprompt-Partial (a refused
 *   save, a conflict), and reports any other failure in a banner instead of failing
 *   silently (a CSRF or server error page is never swapped into the editor).
 */
(() => {
  "use strict";

  const FOCUSABLE = 'a[href], button, input, select, textarea, [tabindex], [contenteditable="true"]';

  function focusables(dialog) {
    return [...dialog.querySelectorAll(FOCUSABLE)].filter(
      (element) =>
        element.tabIndex >= 0 &&
        !element.disabled &&
        !element.closest("[hidden], [inert]") &&
        element.getClientRects().length > 0,
    );
  }

  document.addEventListener("keydown", (event) => {
    if (event.key !== "Tab" || event.defaultPrevented) return;
    const dialog = document.activeElement?.closest("dialog[open]");
    if (!dialog) return;
    const items = focusables(dialog);
    if (!items.length) return;
    const [first, last] = [items[0], items[items.length - 1]];
    if (event.shiftKey ? document.activeElement === first : document.activeElement === last) {
      event.preventDefault();
      (event.shiftKey ? last : first).focus();
    }
  });

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

  document.addEventListener("click", (event) => {
    const opener = event.target instanceof Element && event.target.closest("button[data-dialog]");
    const dialog = opener && document.getElementById(opener.dataset.dialog);
    if (dialog instanceof HTMLDialogElement && !dialog.open) dialog.showModal();
  });
  document.querySelectorAll("dialog[data-show-on-load]").forEach((dialog) => {
    if (!dialog.open) dialog.showModal();
  });

  document.addEventListener("click", async (event) => {
    const button = event.target instanceof Element && event.target.closest("button[data-copy]");
    if (!button) return;
    const source = document.querySelector(button.dataset.copy);
    if (!source) return;
    const status = document.getElementById(button.dataset.copyStatus || "");
    const say = (message) => {
      if (status) status.textContent = message;
    };
    try {
      await navigator.clipboard.writeText(source.textContent.trim());
      say("Copied.");
    } catch {
      const range = document.createRange();
      range.selectNodeContents(source);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      say("Selected: press Ctrl+C (Cmd+C) to copy.");
    }
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
