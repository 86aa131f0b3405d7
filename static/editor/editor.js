/* sysprompt: the editor page controller.
 *
 * Glues the CodeMirror wrapper (codemirror.bundle.js, window.SyspromptCodeMirror) to the
 * server-rendered page: the full-page modal, the variable buttons, the htmx preview,
 * saving with If-Match, conflicts, and history. The server renders every piece of
 * text the author sees; this file moves text between the editor and the requests.
 *
 * The template never travels through a form field: a <textarea> would turn "\r\n" into
 * "\n" (the editor itself splits lines on "\n" only, so "\r\n" round-trips). htmx requests from elements inside [data-include-template] get the editor's
 * exact text added in htmx:configRequest, and the version's settings (the Settings tab:
 * compress; for a fragment also strategy and defaults), which count as unsaved changes
 * like the text does.
 *
 * The same page serves the root template (/ and /editor/) and a fragment's variant
 * (/library/<name>?provider=&model=, and …/-/edit with the modal open): config.urls
 * and config.fragment say which.
 */
(() => {
  "use strict";

  // Where working directories used to be kept, in the browser (shared by every account
  // that logs in there); the server keeps them per user now, and the old list is removed.
  const OLD_RECENT_CWDS_KEY = "sysprompt.recentCwds";
  const FRAGMENT_NAME = /^(?=.{1,200}$)[a-z0-9][a-z0-9._-]*(?:\/[a-z0-9][a-z0-9._-]*)*$/;
  const NAME_LABELS = {
    file: "Path, relative to the working directory",
    fragment: "Fragment name",
    tool: "Tool name",
    var: "Variable name",
  };
  const INSERT_TITLES = {
    fragment: "Insert a fragment",
    tool: "Insert a tool's name",
    var: "Insert a variable",
  };
  const NAME_HELP = {
    fragment: "Suggestions are the library's fragments; a name that does not exist is reported by lint.",
    tool: "Suggestions come from the preview's Tools; any tool name may be typed.",
    var: "Suggestions come from the preview's Variables; any name may be typed.",
  };

  const here = () => location.pathname + location.search;

  // Settings compare by value (defaults as the text of their field).
  const sameSettings = (a, b) => JSON.stringify(a) === JSON.stringify(b);

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
      this.previewAsked = null; // previewState() when the preview in flight was asked for
      this.savedSettings = this.settings(); // and its settings
      this.savingSettings = null;
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
        suggestNames: (type) => this.names(type),
      });

      this.wireModal();
      this.wireToolbar();
      this.wireVariableDialog();
      this.wireRequests();
      this.wireTabs();
      this.wireConflict();
      this.wireSettings();
      this.forgetBrowserCwds();
      // The preview rendered with the page used the cwd the server remembered already.
      this.applyPreview({ remember: false });
      this.updateDirty();
      if (this.modal.hasAttribute("data-open-on-load")) this.open({ push: false });
    }

    // --- state -----------------------------------------------------------------

    text() {
      return this.editor.getText();
    }

    get dirty() {
      return this.text() !== this.savedText || !sameSettings(this.settings(), this.savedSettings);
    }

    // --- settings: saved with the text, as part of the next version -----------------

    settings() {
      const compress = $("setting-compress");
      const strategy = $("setting-strategy");
      const defaults = $("setting-defaults");
      const settings = { compress: Boolean(compress?.checked) };
      if (strategy) settings.strategy = strategy.value;
      if (defaults) settings.defaults = defaults.value;
      return settings;
    }

    applySettings(settings) {
      if (!settings) return;
      const compress = $("setting-compress");
      if (compress) compress.checked = Boolean(settings.compress);
      const strategy = $("setting-strategy");
      if (strategy && settings.strategy) strategy.value = settings.strategy;
      const defaults = $("setting-defaults");
      if (defaults && settings.defaults !== undefined) {
        defaults.value =
          typeof settings.defaults === "string"
            ? settings.defaults
            : Object.entries(settings.defaults).map(([name, value]) => `${name}=${value}`).join("\n");
      }
      this.updateDirty();
    }

    wireSettings() {
      const panel = $("editor-settings");
      if (!panel) return;
      panel.addEventListener("input", () => this.changed());
      panel.addEventListener("change", () => this.changed());
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
        // Ctrl/Cmd+S saves from anywhere in the modal (the Settings tab, the preview's
        // fields); in the editor CodeMirror handles it first.
        if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "s") {
          if (!event.defaultPrevented) {
            event.preventDefault();
            this.save();
          }
          return;
        }
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
          this.applySettings(this.savedSettings);
          this.close();
        } else {
          this.editor.focus();
        }
      });
      window.addEventListener("popstate", () => {
        const inEditor = here() === this.config.urls.editor;
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
      if (push && here() !== this.config.urls.editor) {
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
      if (here() === this.config.urls.editor) {
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
        else if (button.dataset.variableDialog === "file") this.askVariable({ mode: "file" });
        else if (button.dataset.variableDialog) {
          this.askVariable({ mode: "name", type: button.dataset.variableDialog });
        } else if (button.dataset.block) this.askVariable({ mode: button.dataset.block });
      });
    }

    wireVariableDialog() {
      const dialog = $("variable-dialog");
      const form = $("variable-dialog-form");
      const select = $("condition-select");
      const path = $("file-path");
      const showPathField = () => {
        const type = this.askedType();
        $("file-path-field").hidden = type === null;
        $("file-path-label").textContent = NAME_LABELS[type] || NAME_LABELS.file;
      };
      select.addEventListener("change", () => {
        showPathField();
        if (this.askedType() !== null) this.suggestInto(path.value);
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
        const mode = this.variableMode;
        if (mode === "file" || mode === "name") this.editor.insert(`[${ref}]`);
        else if (mode === "if") this.editor.wrap(`[if ${ref}]`, "[endif]");
        else if (mode === "if-not") this.editor.wrap(`[if !${ref}]`, "[endif]");
        else this.editor.wrapElse(`[if ${ref}]`, "[else]", "[endif]");
      });
      this.showPathField = showPathField;
    }

    // The type whose name (or path, for file) the dialog asks for, or null.
    askedType() {
      if (this.variableMode === "file") return "file";
      if (this.variableMode === "name") return this.variableType;
      const selected = $("condition-select").value;
      return selected.endsWith(":") ? selected.slice(0, -1) : null;
    }

    askVariable({ mode, type = null }) {
      this.variableMode = mode;
      this.variableType = type;
      const titles = {
        file: "Insert a file",
        name: INSERT_TITLES[type] || `Insert ${type}:…`,
        if: "Keep the selection only if a variable exists",
        "if-not": "Keep the selection only if a variable does not exist",
        "if-else": "The selection if a variable exists, another text if not",
      };
      $("variable-dialog-title").textContent = titles[mode];
      const inserting = mode === "file" || mode === "name";
      $("condition-field").hidden = inserting;
      $("variable-dialog-insert").textContent = inserting ? "Insert" : "Wrap";
      $("variable-dialog-error").hidden = true;
      const dialog = $("variable-dialog");
      dialog.returnValue = "";
      if (mode === "name") $("file-path").value = "";
      this.showPathField();
      dialog.showModal();
      if (inserting) $("file-path").focus();
      else $("condition-select").focus();
      if (this.askedType() !== null) this.suggestInto($("file-path").value);
    }

    chosenRef() {
      const type = this.askedType();
      if (type === null) return { value: $("condition-select").value };
      const value = $("file-path").value;
      if (!value.trim()) return { error: type === "file" ? "Give the file's path." : "Give a name." };
      if (type === "fragment" && !FRAGMENT_NAME.test(value)) {
        return {
          error:
            "A fragment name is segments of a-z, 0-9, '.', '_' and '-' joined by '/', each starting with a letter or digit (e.g. env/git-repository).",
        };
      }
      if (/[[\]\r\n]/.test(value) || /^\s|\s$/.test(value)) {
        return {
          error: `A ${type === "file" ? "path" : "name"} cannot contain [ ] or line breaks, nor start or end with a space.`,
        };
      }
      return { value: `${type}:${value}` };
    }

    // Names offered after "fragment:", "tool:" and "var:" (autocomplete and the dialog):
    // the library's fragments; the tools and variables typed in the preview's fields (and,
    // in a fragment, the names of its preset defaults). Any other name may be typed.
    names(type) {
      if (type === "fragment") return this.config.fragments || [];
      if (type === "tool") {
        return $("preview-tools")
          .value.split(/[,\n]/)
          .map((name) => name.trim())
          .filter(Boolean);
      }
      if (type === "var") {
        const lines = [$("preview-vars").value, $("setting-defaults")?.value || ""].join("\n");
        const names = lines
          .split("\n")
          .map((line) => line.split("=")[0].trim())
          .filter((name, index, all) => name && all.indexOf(name) === index);
        return names;
      }
      return [];
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
      const type = this.askedType();
      if (type !== "file") {
        const names = this.names(type);
        list.replaceChildren(...names.map((name) => new Option(name)));
        help.textContent = NAME_HELP[type] || "Type a name.";
        return;
      }
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
        const parameters = event.detail.parameters;
        parameters.template = text;
        const settings = this.settings();
        const saving = Boolean(source.closest("#save-form"));
        if (saving || source.closest("#preview-form")) {
          // A checkbox's "false" would read as true: an unchecked box sends nothing.
          if (settings.compress) parameters.compress = "on";
          else delete parameters.compress;
        }
        if (saving) {
          if (settings.strategy !== undefined) parameters.strategy = settings.strategy;
          if (settings.defaults !== undefined) parameters.defaults = settings.defaults;
          this.savingText = text;
          this.savingSettings = settings;
        }
      });
      document.body.addEventListener("htmx:beforeRequest", (event) => {
        if (event.detail.elt !== this.previewForm) return;
        $("preview").setAttribute("aria-busy", "true");
        this.previewAsked = this.previewState();
      });
      // A preview is never aborted (hx-sync "queue last": an aborted request is logged as
      // an error, htmx:sendAbort): one still in flight when the text changes finishes,
      // and its answer is dropped when it no longer matches what the editor holds (after
      // app.js's listener on the document, which decides about error answers). The next
      // preview is asked for, in case nothing else asks.
      document.addEventListener("htmx:beforeSwap", (event) => {
        const asker = event.detail.requestConfig?.elt;
        if (asker !== this.previewForm || !event.detail.shouldSwap) return;
        if (this.previewAsked === this.previewState()) return;
        event.detail.shouldSwap = false;
        window.htmx.trigger(this.previewForm, "template-changed");
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

    // What a preview is asked for: the text, the settings and the preview's fields.
    previewState() {
      const fields = window.htmx.values(this.previewForm);
      return JSON.stringify([this.text(), this.settings(), fields]);
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
      if (this.savingSettings !== null) this.savedSettings = this.savingSettings;
      this.savingText = null;
      this.savingSettings = null;
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
      this.applySettings(body.settings);
      $("save-status").textContent =
        `Version ${number} restored into the editor. Save to make it the current version (Ctrl+Z undoes).`;
      this.editor.focus();
    }

    // --- conflicts -----------------------------------------------------------------

    wireConflict() {
      const dialog = $("conflict-dialog");
      document.body.addEventListener("sysprompt:conflict", () => {
        this.savingText = null;
        this.savingSettings = null;
        if (!dialog.open) dialog.showModal();
        $("conflict-keep-mine")?.focus();
      });
      dialog.addEventListener("click", (event) => {
        const theirs = templateJson(dialog, "conflict-theirs");
        if (!theirs) return;
        if (event.target.closest("#conflict-take-theirs")) {
          this.editor.setText(theirs.template);
          this.savedText = theirs.template;
          this.applySettings(theirs.settings);
          this.savedSettings = this.settings();
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
      const tabs = [...this.modal.querySelectorAll('.side-tabs [role="tab"]')];
      const historyTab = $("tab-history");
      const select = (tab) => {
        for (const other of tabs) {
          const selected = other === tab;
          other.setAttribute("aria-selected", String(selected));
          other.tabIndex = selected ? 0 : -1;
          $(other.getAttribute("aria-controls")).hidden = !selected;
        }
        if (tab === historyTab) this.loadHistory();
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
    }

    loadHistory() {
      document.body.dispatchEvent(new CustomEvent("sysprompt:history-open"));
    }

    // --- working directories ------------------------------------------------------------

    // The server remembers the working directories of each user's previews (newest
    // first, the page renders them in the field's list and opens on the newest); a
    // preview that ran in a valid one other than the newest tells it.
    recentCwds() {
      return Array.from($("recent-cwds").options, (option) => option.value);
    }

    async rememberCwd(cwd) {
      // The server keeps the path normalised ("/a/b/" as "/a/b"): the one last told is
      // not told again on every preview either.
      if (!cwd || cwd === this.toldCwd || this.recentCwds()[0] === cwd) return;
      this.toldCwd = cwd;
      const headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}");
      try {
        const response = await fetch(this.config.urls.cwd, {
          method: "POST",
          headers,
          body: new URLSearchParams({ cwd }),
          credentials: "same-origin",
        });
        if (!response.ok) return; // refused (gone since the preview): nothing remembered
        const { recent } = await response.json();
        if (Array.isArray(recent)) this.renderRecentCwds(recent);
      } catch {
        /* offline: the list is a convenience */
      }
    }

    renderRecentCwds(recent) {
      $("recent-cwds").replaceChildren(...recent.map((cwd) => new Option(cwd)));
    }

    forgetBrowserCwds() {
      try {
        localStorage.removeItem(OLD_RECENT_CWDS_KEY);
      } catch {
        /* storage disabled: nothing kept there */
      }
    }
  }

  // After DOMContentLoaded, so that htmx (a deferred script before this one, which sets
  // itself up on that event) already listens to the forms this page triggers. Deferred
  // scripts run while readyState is "interactive", before the event.
  if (document.readyState === "complete") boot();
  else document.addEventListener("DOMContentLoaded", boot);
})();
