/**
 * Text helpers that make JavaScript strings behave as the Python client's do: lengths
 * and slices in Unicode code points (the server's `shared_prefix_chars` counts them,
 * where a JavaScript string counts UTF-16 units), Python's idea of whitespace
 * (`str.strip`), UTF-8 bytes, and POSIX path normalisation (`os.path.normpath`).
 */

const encoder = new TextEncoder();

/** The UTF-8 bytes of `text` (a lone surrogate becomes U+FFFD, as in every encoder). */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** The UTF-16 index where the first `count` code points of `text` end (its length when
 * it has fewer). A string iterates by code point; a lone surrogate is one, as in Python. */
export function codePointIndex(text: string, count: number): number {
  let index = 0;
  for (const character of text) {
    if (count-- <= 0) break;
    index += character.length;
  }
  return index;
}

// Python's str.isspace(): the characters str.strip() removes.
const PY_SPACE = /^[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/;

/** Whether `text` is empty or only whitespace as Python sees it (`not text.strip()`). */
export function isBlank(text: string): boolean {
  return PY_SPACE.test(text);
}

/** Python's `posixpath.normpath`. */
export function normpath(path: string): string {
  if (path === "") return ".";
  const initial = path.startsWith("/") ? (path.startsWith("//") && !path.startsWith("///") ? 2 : 1) : 0;
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part !== ".." || (!initial && parts.length === 0) || parts[parts.length - 1] === "..") {
      parts.push(part);
    } else if (parts.length > 0) {
      parts.pop();
    }
  }
  const joined = "/".repeat(initial) + parts.join("/");
  return joined || ".";
}
