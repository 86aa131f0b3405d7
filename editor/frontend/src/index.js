// The template editor: CodeMirror 6 composed for the template language, exposed as
// window.SyspromptCodeMirror = { create, classify }. Built into
// static/editor/codemirror.bundle.js by build.mjs (see README.md).

import { EditorSelection, EditorState, Prec, RangeSetBuilder } from "@codemirror/state";
import {
  Decoration,
  EditorView,
  ViewPlugin,
  drawSelection,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  keymap,
  lineNumbers,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { highlightSelectionMatches, searchKeymap } from "@codemirror/search";
import { lintGutter, lintKeymap, setDiagnostics } from "@codemirror/lint";
import {
  autocompletion,
  acceptCompletion,
  closeCompletion,
  completionKeymap,
  completionStatus,
  pickedCompletion,
  selectedCompletionIndex,
  setSelectedCompletion,
  startCompletion,
} from "@codemirror/autocomplete";

import { REASONS, classify, tagRegExpAt } from "./classify.js";

// ---------------------------------------------------------------------------
// Highlighting

const variableMark = Decoration.mark({ class: "cm-sp-variable" });
const typeMark = Decoration.mark({ class: "cm-sp-type" });
const blockMark = Decoration.mark({ class: "cm-sp-block" });
const literalMarks = {};
for (const [reason, text] of Object.entries(REASONS)) {
  literalMarks[reason] = Decoration.mark({
    class: "cm-sp-literal",
    attributes: { title: `Literal text: ${text}` },
  });
}

function tagDecorations(doc) {
  const text = doc.toString();
  const builder = new RangeSetBuilder();
  for (const tag of classify(text)) {
    if (tag.kind === "variable") {
      builder.add(tag.from, tag.to, variableMark);
      const colon = text.indexOf(":", tag.from);
      builder.add(tag.from + 1, colon, typeMark);
    } else if (tag.literal) {
      builder.add(tag.from, tag.to, literalMarks[tag.reason]);
    } else {
      builder.add(tag.from, tag.to, blockMark);
    }
  }
  return builder.finish();
}

const tagHighlighter = ViewPlugin.fromClass(
  class {
    constructor(view) {
      this.decorations = tagDecorations(view.state.doc);
    }
    update(update) {
      if (update.docChanged) this.decorations = tagDecorations(update.state.doc);
    }
  },
  { decorations: (plugin) => plugin.decorations },
);

const theme = EditorView.theme(
  {
    "&": {
      height: "100%",
      backgroundColor: "#ffffff",
      color: "#1f2328",
      fontSize: "13px",
    },
    "&.cm-focused": { outline: "2px solid #0b57d0", outlineOffset: "-2px" },
    ".cm-scroller": {
      overflow: "auto",
      fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace',
      lineHeight: "1.5",
    },
    ".cm-content": { caretColor: "#1f2328" },
    ".cm-gutters": { backgroundColor: "#f6f8fa", color: "#57606a", borderRight: "1px solid #d0d7de" },
    ".cm-activeLine": { backgroundColor: "#f3f7ff" },
    ".cm-activeLineGutter": { backgroundColor: "#e7eefc", color: "#1f2328" },
    ".cm-sp-variable": {
      backgroundColor: "#e3eeff",
      color: "#0a3d91",
      borderRadius: "3px",
      boxShadow: "inset 0 0 0 1px #b6cdf5",
    },
    ".cm-sp-type": { fontWeight: "600" },
    ".cm-sp-block": { color: "#6f2da8", fontWeight: "bold" },
    ".cm-sp-literal": {
      color: "#5c636a",
      textDecorationLine: "underline line-through",
      textDecorationStyle: "dashed",
      textDecorationColor: "#8c959f",
    },
    ".cm-tooltip-autocomplete ul li[aria-selected] .cm-completionDetail": { color: "inherit" },
    ".cm-completionDetail": { color: "#57606a", fontStyle: "normal", marginLeft: "1em" },
  },
  { dark: false },
);

// ---------------------------------------------------------------------------
// Autocomplete

// Text before the cursor that can still become a tag: "[", "[if ", "[if !",
// optionally followed by a partial ref ("sy", "system:o", "file:src/").
const BEFORE_CURSOR = /\[(?:if[ \t]+!?)?(?:[a-z][a-z0-9_-]*(?::[^\[\]\s]*)?)?$/;
const HEAD = /^\[(?:if[ \t]+!?)?/;
const PARTIAL_REF = /^(?:[a-z][a-z0-9_-]*(?::[^\[\]\s]*)?)?$/;

// Insert `text` over from..to; close the tag with "]" unless one already follows. With
// `more`, the tag is not finished (a "file:" or a directory): no "]" and completion
// starts again.
function applyText(text, { close = true, more = false } = {}) {
  return (view, completion, from, to) => {
    const hasClose = view.state.sliceDoc(to, to + 1) === "]";
    const insert = close && !more && !hasClose ? `${text}]` : text;
    const cursor = from + insert.length + (close && !more && hasClose ? 1 : 0);
    view.dispatch({
      changes: { from, to, insert },
      selection: { anchor: cursor },
      scrollIntoView: true,
      userEvent: "input.complete",
      annotations: pickedCompletion.of(completion),
    });
    if (more) startCompletion(view);
  };
}

// `suggestNames(type, prefix)` (optional) gives the names to offer after "[type:" for a
// dynamic type other than file (fragment:, tool:, var:): an array or a promise of one.
function completionSource(catalog, suggestFiles, suggestNames) {
  const refs = [];
  const seenDynamic = new Set();
  for (const entry of catalog || []) {
    if (entry.dynamic) {
      if (seenDynamic.has(entry.type)) continue;
      seenDynamic.add(entry.type);
      refs.push({
        label: `${entry.type}:`,
        detail: entry.description || "",
        type: "variable",
        apply: applyText(`${entry.type}:`, { more: true }),
      });
    } else {
      const ref = `${entry.type}:${entry.name}`;
      refs.push({ label: ref, detail: entry.description || "", type: "variable", apply: applyText(ref) });
    }
  }
  // After a bare "[" every label matches equally and CodeMirror would sort them by name,
  // putting "else]" and "endif]" before the variables: the boost lists the keywords
  // last. Once a letter is typed, how well it matches decides ("[e" offers else first).
  const keywords = [
    { label: "if ", displayLabel: "if", detail: "start a block: [if type:name]", type: "keyword", boost: -1, apply: applyText("if ", { close: false, more: true }) },
    { label: "else]", displayLabel: "else", detail: "the block's other branch", type: "keyword", boost: -1, apply: applyText("else") },
    { label: "endif]", displayLabel: "endif", detail: "end the block", type: "keyword", boost: -1, apply: applyText("endif") },
  ];
  const filesEnabled = typeof suggestFiles === "function" && seenDynamic.has("file");
  const namesEnabled = typeof suggestNames === "function";

  return async (context) => {
    const match = context.matchBefore(BEFORE_CURSOR);
    if (!match) return null;
    const head = HEAD.exec(match.text)[0];
    const from = match.from + head.length;
    const word = match.text.slice(head.length);
    const bare = head === "[";
    let options = bare ? refs.concat(keywords) : refs;

    if (filesEnabled && word.startsWith("file:")) {
      const prefix = word.slice("file:".length);
      const dir = prefix.slice(0, prefix.lastIndexOf("/") + 1);
      let paths = [];
      try {
        paths = (await suggestFiles(prefix)) || [];
      } catch (err) {
        paths = [];
      }
      if (context.aborted) return null;
      const files = paths.map((path) => ({
        label: `file:${path}`,
        type: "text",
        apply: applyText(`file:${path}`, { more: path.endsWith("/") }),
      }));
      options = files.concat(options);
      // Still valid while the user types within the same directory.
      const stem = `file:${dir}`;
      return {
        from,
        options,
        validFor: (text) => text.startsWith(stem) && /^[^\[\]\s\/]*$/.test(text.slice(stem.length)),
      };
    }
    const typed = /^([a-z][a-z0-9_-]*):/.exec(word);
    const nameType = typed && typed[1] !== "file" && seenDynamic.has(typed[1]) ? typed[1] : null;
    if (namesEnabled && nameType) {
      let names = [];
      try {
        names = (await suggestNames(nameType, word.slice(nameType.length + 1))) || [];
      } catch (err) {
        names = [];
      }
      if (context.aborted) return null;
      const named = names.map((name) => ({
        label: `${nameType}:${name}`,
        type: "variable",
        apply: applyText(`${nameType}:${name}`),
      }));
      const stem = `${nameType}:`;
      return {
        from,
        // Without the bare "type:" entry: it would match best and pick nothing.
        options: named.concat(options.filter((option) => option.label !== stem)),
        validFor: (text) => text.startsWith(stem) && PARTIAL_REF.test(text),
      };
    }
    return {
      from,
      options,
      // Re-query once "file:" (or another dynamic type with names) is typed.
      validFor: (text) => {
        if (!PARTIAL_REF.test(text)) return false;
        if (filesEnabled && text.startsWith("file:")) return false;
        const head = /^([a-z][a-z0-9_-]*):/.exec(text);
        return !(namesEnabled && head && head[1] !== "file" && seenDynamic.has(head[1]));
      },
    };
  };
}

// The list opens with its first option picked (selectOnOpen): Enter (CodeMirror's
// completion keymap) and Tab accept the picked option; Esc closes the list, after which
// Enter starts a new line. With no list (or one still being computed) Tab leaves the
// editor as usual.
function acceptWithTab(view) {
  if (completionStatus(view.state) !== "active") return false;
  if (selectedCompletionIndex(view.state) === null) {
    view.dispatch({ effects: setSelectedCompletion(0) });
  }
  if (acceptCompletion(view)) return true;
  // CodeMirror ignores picks for a moment after the list opens (its interactionDelay, so
  // that a key meant for the text picks nothing); Tab is never meant for the text, so
  // accept once that moment has passed, unless the text changed meanwhile.
  const doc = view.state.doc;
  setTimeout(() => {
    if (view.state.doc === doc) acceptCompletion(view);
  }, TAB_RETRY_MS);
  return true;
}

const TAB_RETRY_MS = 80;

// ---------------------------------------------------------------------------
// Typing over a selection

// Chrome, left to replace a selection with typed text itself, keeps the look of the
// first character it deletes (a highlighted variable's colour and weight) by putting the
// text in a <span style="…">: an inline style attribute, which the page's
// Content-Security-Policy refuses (style-src-attr) and logs as a violation. So a typed
// character over a non-empty selection is inserted by CodeMirror, as paste is; an
// empty selection and IME composition keep the browser's own path.
const typeOverSelection = EditorView.domEventHandlers({
  beforeinput(event, view) {
    if (event.inputType !== "insertText" || event.isComposing || view.composing) return false;
    if (typeof event.data !== "string" || !event.data) return false;
    if (view.state.selection.ranges.every((range) => range.empty)) return false;
    event.preventDefault();
    view.dispatch(view.state.replaceSelection(event.data), {
      scrollIntoView: true,
      userEvent: "input.type",
    });
    return true;
  },
});

// ---------------------------------------------------------------------------
// Whole lines

const BLANK_BEFORE = /^[ \t]*$/;
const BLANK_AFTER = /^[ \t]*\r?$/;

// The lines a selection covers whole, or null when it starts or ends inside a line. It
// covers them whole when it starts at a line's start and ends at a line's end or at the
// start of a later line (spaces and tabs around it do not count); a cursor on a blank
// line covers that line. `eol` is the line ending to insert: "\r\n" in CRLF text.
function wholeLines(doc, range) {
  const first = doc.lineAt(range.from);
  let last = doc.lineAt(range.to);
  if (!range.empty && range.to === last.from && last.number > first.number) {
    last = doc.line(last.number - 1);
  }
  const before = doc.sliceString(first.from, range.from);
  const after = range.to > last.to ? "" : doc.sliceString(range.to, last.to);
  if (!BLANK_BEFORE.test(before) || !BLANK_AFTER.test(after)) return null;
  const crlf = first.text.endsWith("\r") || last.text.endsWith("\r");
  return { first, last, eol: crlf ? "\r\n" : "\n", ended: last.number < doc.lines };
}

// Where to insert a closing text on lines of its own after `lines.last`, and that text:
// at the start of the next line, or after a line ending when the last line has none.
function closingLines(lines, tags) {
  const { last, eol, ended } = lines;
  const body = tags.join(eol);
  return ended
    ? { at: last.to + 1, insert: body + eol, offset: 0 }
    : { at: last.to, insert: eol + body, offset: eol.length };
}

// ---------------------------------------------------------------------------
// Positions and diagnostics

// Offset of a 1-based line and 1-based column, where the server counts columns in code
// points (Python str offsets); clamped to the document.
function offsetOf(doc, line, column) {
  const lineNo = Math.min(Math.max(1, Math.floor(Number(line) || 1)), doc.lines);
  const info = doc.line(lineNo);
  let remaining = Math.max(0, Math.floor(Number(column) || 1) - 1);
  let i = 0;
  const text = info.text;
  while (remaining > 0 && i < text.length) {
    const code = text.charCodeAt(i);
    i += code >= 0xd800 && code <= 0xdbff && i + 1 < text.length ? 2 : 1;
    remaining--;
  }
  return info.from + i;
}

const NON_SPACE = /\S+/y;

function toDiagnostic(state, text, item) {
  const doc = state.doc;
  const from = offsetOf(doc, item.line, item.column);
  let to;
  const endColumn = item.end_column ?? item.endColumn;
  if (endColumn != null && Number(endColumn) > Number(item.column)) {
    to = offsetOf(doc, item.line, endColumn);
  } else {
    const tag = tagRegExpAt();
    tag.lastIndex = from;
    const m = tag.exec(text);
    if (m) {
      to = from + m[0].length;
    } else {
      NON_SPACE.lastIndex = from;
      const run = NON_SPACE.exec(text);
      to = run ? from + run[0].length : from + 1;
    }
  }
  to = Math.min(Math.max(to, from), doc.length);
  const severity = ["error", "warning", "info", "hint"].includes(item.severity) ? item.severity : "warning";
  return { from, to, severity, message: String(item.message ?? "") };
}

// ---------------------------------------------------------------------------
// The wrapper

export function create(options = {}) {
  const {
    parent,
    doc = "",
    catalog = [],
    onChange,
    onSave,
    suggestFiles,
    suggestNames,
    label = "Template",
    nonce = "",
  } = options;

  const saveKeymap = Prec.highest(
    keymap.of([
      {
        key: "Mod-s",
        preventDefault: true,
        run: () => {
          if (typeof onSave === "function") onSave();
          return true;
        },
      },
      { key: "Tab", run: acceptWithTab },
      {
        // A completion still being computed (up to 100 ms after a keystroke) would
        // swallow Escape although no list shows: cancel it and let Escape through to
        // the page (which closes the editor). A list on screen still takes Escape.
        key: "Escape",
        run: (view) => {
          if (completionStatus(view.state) === "pending") closeCompletion(view);
          return false;
        },
      },
    ]),
  );

  const state = EditorState.create({
    doc,
    extensions: [
      // Split lines on "\n" only, as the server does: the document is the text
      // byte for byte (a "\r" stays), and lines and offsets agree with lint's.
      EditorState.lineSeparator.of("\n"),
      saveKeymap,
      lineNumbers(),
      highlightActiveLineGutter(),
      highlightSpecialChars(),
      history(),
      drawSelection(),
      highlightActiveLine(),
      highlightSelectionMatches(),
      EditorView.lineWrapping,
      lintGutter(),
      autocompletion({
        override: [completionSource(catalog, suggestFiles, suggestNames)],
        icons: false,
        selectOnOpen: true,
      }),
      typeOverSelection,
      keymap.of([...completionKeymap, ...searchKeymap, ...historyKeymap, ...lintKeymap, ...defaultKeymap]),
      tagHighlighter,
      theme,
      EditorView.contentAttributes.of({ "aria-label": label }),
      // The page's Content-Security-Policy allows <style> elements only with its nonce.
      ...(nonce ? [EditorView.cspNonce.of(nonce)] : []),
      EditorView.updateListener.of((update) => {
        if (update.docChanged && typeof onChange === "function") onChange(update.state.doc.toString());
      }),
    ],
  });

  const view = new EditorView({ state, parent });

  function replaceByRange(spec) {
    view.dispatch(
      view.state.changeByRange(spec),
      { scrollIntoView: true, userEvent: "input" },
    );
    view.focus();
  }

  return {
    view,
    getText() {
      return view.state.doc.toString();
    },
    setText(text) {
      view.dispatch({
        changes: { from: 0, to: view.state.doc.length, insert: String(text ?? "") },
        selection: { anchor: 0 },
        scrollIntoView: true,
        userEvent: "input.replace",
      });
    },
    insert(text) {
      view.dispatch(view.state.replaceSelection(String(text)), { scrollIntoView: true, userEvent: "input" });
      view.focus();
    },
    // Block buttons. A selection of whole lines (or a cursor on a blank line) gets the
    // tags on lines of their own, which the standalone-line rule removes from the
    // prompt; inside a line the tags go around the selection.
    wrap(before, after) {
      before = String(before);
      after = String(after);
      replaceByRange((range) => {
        const lines = wholeLines(view.state.doc, range);
        if (lines) {
          const open = before + lines.eol;
          const close = closingLines(lines, [after]);
          return {
            changes: [
              { from: lines.first.from, insert: open },
              { from: close.at, insert: close.insert },
            ],
            range: EditorSelection.range(range.anchor + open.length, range.head + open.length),
          };
        }
        if (range.empty) {
          return {
            changes: { from: range.from, insert: before + after },
            range: EditorSelection.cursor(range.from + before.length),
          };
        }
        return {
          changes: [
            { from: range.from, insert: before },
            { from: range.to, insert: after },
          ],
          range: EditorSelection.range(range.anchor + before.length, range.head + before.length),
        };
      });
    },
    wrapElse(before, middle, after) {
      before = String(before);
      middle = String(middle);
      after = String(after);
      replaceByRange((range) => {
        const lines = wholeLines(view.state.doc, range);
        if (lines) {
          // [if …] / the lines / [else] / an empty line for the cursor / [endif]
          const open = before + lines.eol;
          const close = closingLines(lines, [middle, "", after]);
          return {
            changes: [
              { from: lines.first.from, insert: open },
              { from: close.at, insert: close.insert },
            ],
            range: EditorSelection.cursor(
              close.at + open.length + close.offset + middle.length + lines.eol.length,
            ),
          };
        }
        return {
          changes: range.empty
            ? { from: range.from, insert: before + middle + after }
            : [
                { from: range.from, insert: before },
                { from: range.to, insert: middle + after },
              ],
          range: EditorSelection.cursor(range.to + before.length + middle.length),
        };
      });
    },
    focus() {
      view.focus();
    },
    setDiagnostics(list) {
      const text = view.state.doc.toString();
      const diagnostics = (list || []).map((item) => toDiagnostic(view.state, text, item));
      view.dispatch(setDiagnostics(view.state, diagnostics));
    },
    jumpTo(line, column) {
      const pos = offsetOf(view.state.doc, line, column);
      view.dispatch({
        selection: { anchor: pos },
        effects: EditorView.scrollIntoView(pos, { y: "center" }),
      });
      view.focus();
    },
  };
}

export { classify };

if (typeof window !== "undefined") {
  window.SyspromptCodeMirror = { create, classify };
}
