/* sysprompt: the editor page controller.
 *
 * Glues the CodeMirror wrapper (codemirror.bundle.js, window.SyspromptCodeMirror) to the
 * server-rendered page: the full-page modal, the variable buttons, the htmx preview,
 * saving with If-Match, conflicts, and history. The server renders every piece of
 * text the author sees; this file moves text between the editor and the requests.
 *
 * The template never travels through a form field: a <textarea> would turn "\r\n" into
 * "\n" (the editor itself splits lines on "\n" only, so "\r\n" round-trips). htmx requests from elements inside [data-include-template] get the editor's
 * exact text added in htmx:configRequest.
 */
(() => {
  "use strict";

  const RECENT_CWDS_KEY = "sysprompt.recentCwds";
  const RECENT_CWDS_MAX = 8;

  const $ = (id) => document.getElementById(id);

  // The JSON of a json_script element that a partial wraps in a <template> (htmx, with
  // allowScriptTags off, removes every <script> it swaps in, but not a template's content).
  function templateJson(container, id) {
    for (const template of container.querySelectorAll("template")) {
      const script = template.content.getElementById(id);
      if (script) return JSON.parse(script.textContent);
    }
    return null;
  }

  function boot() {
    const configElement = $("editor-config");
    if (!configElement || !window.SyspromptCodeMirror) return;
    const config = JSON.parse(configElement.textContent);
    const page = new EditorPage(config);
    window.syspromptEditor = page; // for people poking at the console, and the browser tests
  }

  class EditorPage {
    constructor(config) {
      this.config = config;
      this.modal = $("editor-modal");
      this.previewForm = $("preview-form");
      this.saveForm = $("save-form");
      this.baseEtag = $("base-etag");
      this.savedText = config.template; // the text of the version the editor is based on
      this.savingText = null;
      this.savedThisSession = false;

      this.editor = window.SyspromptCodeMirror.create({
        parent: $("template-editor"),
        doc: config.template,
        catalog: config.catalog,
        label: "Template",
        nonce: config.cspNonce,
        onChange: () => this.changed(),
        onSave: () => this.save(),
        suggestFiles: (prefix) => this.files(prefix),
      });

      this.wireModal();
      this.wireToolbar();
      this.wireVariableDialog();
      this.wireRequests();
      this.wireTabs();
      this.wireConflict();
      this.restoreRecentCwd();
      // The preview rendered with the page used the default cwd, which nobody chose.
      this.applyPreview({ remember: false });
      this.updateDirty();
      if (this.modal.hasAttribute("data-open-on-load")) this.open({ push: false });
    }

    // --- state -----------------------------------------------------------------

    text() {
      return this.editor.getText();
    }

    get dirty() {
      return this.text() !== this.savedText;
    }

    changed() {
      this.updateDirty();
      if (window.htmx) window.htmx.trigger(this.previewForm, "template-changed");
    }

    updateDirty() {
      const dirty = this.dirty;
      $("dirty-marker").hidden = !dirty;
      this.modal.classList.toggle("is-dirty", dirty);
    }

    // --- the modal ---------------------------------------------------------------

    wireModal() {
      document.querySelectorAll("[data-open-editor]").forEach((link) => {
        link.addEventListener("click", (event) => {
          event.preventDefault();
          this.open({ push: true });
        });
      });
      $("close-editor").addEventListener("click", () => this.requestClose());
      // Esc: the page decides (closedby="none" keeps the browser from closing it first).
      this.modal.addEventListener("keydown", (event) => {
        if (event.key !== "Escape" || event.defaultPrevented) return;
        event.preventDefault();
        this.requestClose();
      });
      this.modal.addEventListener("cancel", (event) => {
        event.preventDefault();
        this.requestClose();
      });
      $("discard-dialog").addEventListener("close", () => {
        if ($("discard-dialog").returnValue === "discard") {
          this.editor.setText(this.savedText);
          this.close();
        } else {
          this.editor.focus();
        }
      });
      window.addEventListener("popstate", () => {
        const inEditor = location.pathname === this.config.urls.editor;
        if (inEditor && !this.modal.open) this.open({ push: false });
        if (!inEditor && this.modal.open) {
          if (this.dirty) history.pushState({}, "", this.config.urls.editor);
          this.requestClose();
        }
      });
      window.addEventListener("beforeunload", (event) => {
        if (this.modal.open && this.dirty) event.preventDefault();
      });
    }

    open({ push }) {
      if (!this.modal.open) this.modal.showModal();
      document.documentElement.classList.add("modal-open");
      if (push && location.pathname !== this.config.urls.editor) {
        history.pushState({}, "", this.config.urls.editor);
      }
      this.editor.focus();
    }

    requestClose() {
      const discard = $("discard-dialog");
      if (discard.open) return;
      if (this.dirty) {
        discard.returnValue = "";
        discard.showModal();
        return;
      }
      this.close();
    }

    close() {
      this.modal.close();
      document.documentElement.classList.remove("modal-open");
      if (location.pathname === this.config.urls.editor) {
        history.pushState({}, "", this.config.urls.index);
      }
      // The overview behind the modal shows the current version: refresh it after saves.
      if (this.savedThisSession) location.reload();
      else $("open-editor")?.focus();
    }

    // --- inserting variables and blocks ------------------------------------------

    wireToolbar() {
      const toolbar = this.modal.querySelector(".toolbar");
      toolbar.addEventListener("click", (event) => {
        const button = event.target.closest("button");
        if (!button) return;
        if (button.dataset.insert) this.editor.insert(button.dataset.insert);
        else if (button.dataset.variableDialog) this.askVariable({ mode: "file" });
        else if (button.dataset.block) this.askVariable({ mode: button.dataset.block });
      });
    }

    wireVariableDialog() {
      const dialog = $("variable-dialog");
      const form = $("variable-dialog-form");
      const select = $("condition-select");
      const path = $("file-path");
      const showPathField = () => {
        const needsPath = this.variableMode === "file" || select.value.endsWith(":");
        $("file-path-field").hidden = !needsPath;
      };
      select.addEventListener("change", () => {
        showPathField();
        if (select.value.endsWith(":")) this.suggestInto(path.value);
      });
      let timer = null;
      path.addEventListener("input", () => {
        clearTimeout(timer);
        timer = setTimeout(() => this.suggestInto(path.value), 150);
      });
      dialog.querySelector("button[value=cancel]").type = "button";
      dialog.querySelector("button[value=cancel]").addEventListener("click", () => dialog.close());
      form.addEventListener("submit", (event) => {
        const ref = this.chosenRef();
        const error = $("variable-dialog-error");
        if (ref.error) {
          event.preventDefault();
          error.textContent = ref.error;
          error.hidden = false;
          return;
        }
        error.hidden = true;
        dialog.returnValue = "insert";
        this.pendingRef = ref.value;
      });
      dialog.addEventListener("close", () => {
        if (dialog.returnValue !== "insert" || !this.pendingRef) return;
        const ref = this.pendingRef;
        this.pendingRef = null;
        if (this.variableMode === "file") this.editor.insert(`[${ref}]`);
        else if (this.variableMode === "if") this.editor.wrap(`[if ${ref}]`, "[endif]");
        else if (this.variableMode === "if-not") this.editor.wrap(`[if !${ref}]`, "[endif]");
        else this.editor.wrapElse(`[if ${ref}]`, "[else]", "[endif]");
      });
      this.showPathField = showPathField;
    }

    askVariable({ mode }) {
      this.variableMode = mode;
      const titles = {
        file: "Insert a file",
        if: "Keep the selection only if a variable exists",
        "if-not": "Keep the selection only if a variable does not exist",
        "if-else": "The selection if a variable exists, another text if not",
      };
      $("variable-dialog-title").textContent = titles[mode];
      $("condition-field").hidden = mode === "file";
      $("variable-dialog-insert").textContent = mode === "file" ? "Insert" : "Wrap";
      $("variable-dialog-error").hidden = true;
      const dialog = $("variable-dialog");
      dialog.returnValue = "";
      this.showPathField();
      dialog.showModal();
      if (mode === "file") $("file-path").focus();
      else $("condition-select").focus();
      this.suggestInto($("file-path").value);
    }

    chosenRef() {
      const selected = $("condition-select").value;
      const needsPath = this.variableMode === "file" || selected.endsWith(":");
      if (!needsPath) return { value: selected };
      const path = $("file-path").value;
      if (!path.trim()) return { error: "Give the file's path." };
      if (/[[\]\r\n]/.test(path) || /^\s|\s$/.test(path)) {
        return {
          error: "A path cannot contain [ ] or line breaks, nor start or end with a space.",
        };
      }
      return { value: `${this.variableMode === "file" ? "file:" : selected}${path}` };
    }

    async files(query) {
      const url = new URL(this.config.urls.files, location.href);
      url.searchParams.set("cwd", $("preview-cwd").value);
      url.searchParams.set("q", query);
      const response = await fetch(url, { headers: { Accept: "application/json" } });
      const body = await response.json();
      if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
      return body.files;
    }

    async suggestInto(query) {
      const list = $("file-suggestions");
      const help = $("file-path-help");
      try {
        const files = await this.files(query);
        list.replaceChildren(...files.map((name) => new Option(name)));
        help.textContent = files.length
          ? `Suggestions come from ${$("preview-cwd").value}.`
          : `No file under ${$("preview-cwd").value} matches.`;
      } catch (error) {
        list.replaceChildren();
        help.textContent = `No suggestions: ${error.message}`;
      }
    }

    // --- htmx requests: preview, save, history -------------------------------------

    wireRequests() {
      document.body.addEventListener("htmx:configRequest", (event) => {
        const source = event.detail.elt;
        if (!source.closest("[data-include-template]")) return;
        const text = this.text();
        event.detail.parameters.template = text;
        if (source.closest("#save-form")) this.savingText = text;
      });
      document.body.addEventListener("htmx:beforeRequest", (event) => {
        if (event.detail.elt === this.previewForm) $("preview").setAttribute("aria-busy", "true");
      });
      document.body.addEventListener("htmx:afterSettle", (event) => {
        if (event.detail.target && event.detail.target.id === "preview") this.applyPreview();
      });
      document.body.addEventListener("sysprompt:saved", (event) => this.saved(event.detail));
      $("preview").addEventListener("click", (event) => {
        const diagnostic = event.target.closest(".diagnostic");
        if (diagnostic) {
          this.editor.jumpTo(Number(diagnostic.dataset.line), Number(diagnostic.dataset.column));
        }
      });
      $("side-history").addEventListener("click", (event) => {
        const restore = event.target.closest("[data-restore]");
        if (restore) this.restore(Number(restore.dataset.restore));
      });
    }

    applyPreview({ remember = true } = {}) {
      $("preview").setAttribute("aria-busy", "false");
      this.editor.setDiagnostics(templateJson($("preview"), "preview-diagnostics-data") || []);
      const result = $("preview-result");
      if (remember && result?.dataset.cwdValid === "true") this.rememberCwd(result.dataset.cwd);
    }

    save() {
      if (!this.config.canEdit) {
        $("save-status").textContent = "You may preview but not save this template.";
        return;
      }
      window.htmx.trigger(this.saveForm, "submit");
    }

    saved({ version, etag }) {
      this.baseEtag.value = etag;
      if (this.savingText !== null) this.savedText = this.savingText;
      this.savingText = null;
      this.savedThisSession = true;
      $("editor-version").textContent = `v${version}`;
      this.updateDirty();
      if (!$("side-history").hidden) this.loadHistory();
    }

    async restore(number) {
      const url = this.config.urls.version.replace("{n}", String(number));
      const response = await fetch(url, { headers: { Accept: "application/json" } });
      if (!response.ok) {
        $("save-status").textContent = `Version ${number} could not be loaded (${response.status}).`;
        return;
      }
      const body = await response.json();
      this.editor.setText(body.template);
      $("save-status").textContent =
        `Version ${number} restored into the editor. Save to make it the current version (Ctrl+Z undoes).`;
      this.editor.focus();
    }

    // --- conflicts -----------------------------------------------------------------

    wireConflict() {
      const dialog = $("conflict-dialog");
      document.body.addEventListener("sysprompt:conflict", () => {
        this.savingText = null;
        if (!dialog.open) dialog.showModal();
        $("conflict-keep-mine")?.focus();
      });
      dialog.addEventListener("click", (event) => {
        const theirs = templateJson(dialog, "conflict-theirs");
        if (!theirs) return;
        if (event.target.closest("#conflict-take-theirs")) {
          this.editor.setText(theirs.template);
          this.savedText = theirs.template;
          this.adopt(theirs);
          dialog.close();
          $("save-status").textContent = `Loaded version ${theirs.version}; your text was discarded.`;
          this.updateDirty();
          this.editor.focus();
        } else if (event.target.closest("#conflict-keep-mine")) {
          this.adopt(theirs);
          dialog.close();
          this.save();
          this.editor.focus();
        }
      });
    }

    adopt(theirs) {
      this.baseEtag.value = theirs.etag;
      $("editor-version").textContent = `v${theirs.version}`;
    }

    // --- side tabs: preview and history ----------------------------------------------

    wireTabs() {
      const tabs = [$("tab-preview"), $("tab-history")];
      const select = (tab) => {
        for (const other of tabs) {
          const selected = other === tab;
          other.setAttribute("aria-selected", String(selected));
          other.tabIndex = selected ? 0 : -1;
          $(other.getAttribute("aria-controls")).hidden = !selected;
        }
        $("history-button").setAttribute("aria-expanded", String(tab === tabs[1]));
        if (tab === tabs[1]) this.loadHistory();
      };
      tabs.forEach((tab, index) => {
        tab.addEventListener("click", () => select(tab));
        tab.addEventListener("keydown", (event) => {
          if (event.key !== "ArrowRight" && event.key !== "ArrowLeft") return;
          const next = tabs[(index + (event.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
          select(next);
          next.focus();
        });
      });
      $("history-button").addEventListener("click", () => {
        const showing = !$("side-history").hidden;
        select(showing ? tabs[0] : tabs[1]);
        (showing ? tabs[0] : tabs[1]).focus();
      });
    }

    loadHistory() {
      document.body.dispatchEvent(new CustomEvent("sysprompt:history-open"));
    }

    // --- working directories ------------------------------------------------------------

    recentCwds() {
      try {
        const stored = JSON.parse(localStorage.getItem(RECENT_CWDS_KEY) || "[]");
        return Array.isArray(stored) ? stored.filter((item) => typeof item === "string") : [];
      } catch {
        return [];
      }
    }

    rememberCwd(cwd) {
      if (!cwd) return;
      const recent = [cwd, ...this.recentCwds().filter((item) => item !== cwd)].slice(
        0,
        RECENT_CWDS_MAX,
      );
      try {
        localStorage.setItem(RECENT_CWDS_KEY, JSON.stringify(recent));
      } catch {
        /* storage full or disabled: the list is a convenience */
      }
      this.renderRecentCwds(recent);
    }

    renderRecentCwds(recent) {
      $("recent-cwds").replaceChildren(...recent.map((cwd) => new Option(cwd)));
    }

    restoreRecentCwd() {
      const recent = this.recentCwds();
      this.renderRecentCwds(recent);
      const field = $("preview-cwd");
      if (recent.length && recent[0] !== field.value) {
        field.value = recent[0];
        window.htmx?.trigger(this.previewForm, "submit");
      }
    }
  }

  // After DOMContentLoaded, so that htmx (a deferred script before this one, which sets
  // itself up on that event) already listens to the forms this page triggers. Deferred
  // scripts run while readyState is "interactive", before the event.
  if (document.readyState === "complete") boot();
  else document.addEventListener("DOMContentLoaded", boot);
})();
