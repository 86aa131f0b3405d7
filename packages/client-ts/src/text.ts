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

/** The length of `text` in code points (a lone surrogate counts as one, as in Python). */
export function codePointLength(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

/** The UTF-16 index where the first `count` code points of `text` end (its length when
 * it has fewer). */
export function codePointIndex(text: string, count: number): number {
  let i = 0;
  for (let seen = 0; seen < count && i < text.length; seen++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      i += next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
    } else {
      i++;
    }
  }
  return i;
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
