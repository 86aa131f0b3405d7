// The template language's tags, ported from sysprompt/template/lexer.py (the Python
// regex is authoritative), and block pairing as in sysprompt/template/parser.py
// (docs/template-language.md §4). Pure functions, no CodeMirror: usable on their own.

const TYPE = "[a-z][a-z0-9_-]*";
// A name starts and ends with a character that is not whitespace or a bracket; inside,
// whitespace other than CR and LF may separate runs of such characters.
// Python's \s, not JavaScript's (they differ on U+001C–U+001F, U+0085 and U+FEFF).
const WS = "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const NAME = `[^${WS}\\[\\]]+(?:[${WS.replace("\\n", "").replace("\\r", "")}]+[^${WS}\\[\\]]+)*`;
const REF = `${TYPE}:${NAME}`;

// Groups: 1 = variable ref, 2 = if tag body, 3 = else/endif. Python's possessive
// quantifiers are plain greedy ones here: no alternative split of a run can end at a
// "]" or ":", so backtracking never finds a different match, and the work at each "["
// is bounded by the distance to the next bracket (linear overall).
const TAG_SOURCE = `\\[(?:(${REF})\\]|(?:(if[ \\t]+!?${REF})|(else|endif))\\])`;

/** A fresh global regex matching every tag (the tag's own text, no line ending). */
export function tagRegExp() {
  return new RegExp(TAG_SOURCE, "g");
}

/** A sticky regex: does a tag start exactly at `lastIndex`? */
export function tagRegExpAt() {
  return new RegExp(TAG_SOURCE, "y");
}

/** Why a structural-looking tag ended up literal text. */
export const REASONS = {
  "unclosed-if": "this [if] is never closed",
  "else-of-unclosed-if": "this [else] belongs to an unclosed [if]",
  "stray-else": "[else] outside any block",
  "second-else": "second [else] in one block",
  "stray-endif": "[endif] without an open [if]",
};

/**
 * Every tag of `text`, in order: {from, to, kind, literal, reason}.
 * kind is "variable" | "if" | "else" | "endif"; from/to are UTF-16 offsets (to
 * exclusive); literal is true for if/else/endif tags that are plain text after
 * pairing, and reason (a key of REASONS, or null) says why. Linear time.
 */
export function classify(text) {
  const tags = [];
  const re = tagRegExp();
  // Open blocks: index of the [if] tag, and of its [else] (-1 when none yet).
  const openIf = [];
  const openElse = [];
  let m;
  while ((m = re.exec(text)) !== null) {
    const from = m.index;
    const to = from + m[0].length;
    if (m[1] !== undefined) {
      tags.push({ from, to, kind: "variable", literal: false, reason: null });
    } else if (m[2] !== undefined) {
      openIf.push(tags.length);
      openElse.push(-1);
      tags.push({ from, to, kind: "if", literal: false, reason: null });
    } else if (m[3] === "else") {
      const top = openIf.length - 1;
      let reason = null;
      if (top < 0) reason = "stray-else";
      else if (openElse[top] !== -1) reason = "second-else";
      else openElse[top] = tags.length;
      tags.push({ from, to, kind: "else", literal: reason !== null, reason });
    } else {
      if (openIf.length === 0) {
        tags.push({ from, to, kind: "endif", literal: true, reason: "stray-endif" });
      } else {
        openIf.pop();
        openElse.pop();
        tags.push({ from, to, kind: "endif", literal: false, reason: null });
      }
    }
  }
  // Blocks still open are unmatched: their [if] and attached [else] are literal text.
  for (let i = 0; i < openIf.length; i++) {
    const t = tags[openIf[i]];
    t.literal = true;
    t.reason = "unclosed-if";
    if (openElse[i] !== -1) {
      const e = tags[openElse[i]];
      e.literal = true;
      e.reason = "else-of-unclosed-if";
    }
  }
  return tags;
}
