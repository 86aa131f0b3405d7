/**
 * git's configuration files, read as libgit2 reads them for the Python core: entries by
 * `section[.subsection].name` (section and name case-insensitive), the last one of the
 * last file winning. An entry with no `=` has no value (libgit2 answers none, so the
 * core takes its default). A file that includes others (`include.path`, `includeIf`)
 * is not followed here: the values that depend on it are unavailable.
 */

import { Unavailable } from "./errors.js";

export class Config {
  readonly #values = new Map<string, (string | null)[]>();
  includes = false;

  /** Adds the entries of one file's text (later files win). */
  add(source: string): void {
    let section = "";
    const length = source.length;
    let i = 0;
    const fail = (): never => {
      throw new Unavailable("the repository's configuration cannot be read");
    };
    while (i < length) {
      let c = source[i]!;
      if (c === "\n" || c === " " || c === "\t" || c === "\r") {
        i++;
        continue;
      }
      if (c === "#" || c === ";") {
        while (i < length && source[i] !== "\n") i++;
        continue;
      }
      if (c === "[") {
        let j = i + 1;
        let name = "";
        while (j < length && source[j] !== "]" && source[j] !== '"' && source[j] !== "\n") name += source[j++];
        name = name.trim();
        if (source[j] === '"') {
          let sub = "";
          for (j++; j < length && source[j] !== '"'; j++) {
            if (source[j] === "\n") fail();
            if (source[j] === "\\") j++;
            sub += source[j] ?? "";
          }
          j++;
          while (source[j] === " " || source[j] === "\t") j++;
          section = `${name.toLowerCase()}.${sub}`;
        } else {
          const dot = name.indexOf(".");
          section = (dot < 0 ? name : `${name.slice(0, dot)}.${name.slice(dot + 1)}`).toLowerCase();
        }
        if (source[j] !== "]" || !name) fail();
        i = j + 1;
        continue;
      }
      let name = "";
      while (i < length && /[A-Za-z0-9-]/.test(source[i]!)) name += source[i++];
      if (!name || !section) fail();
      while (i < length && (source[i] === " " || source[i] === "\t")) i++;
      let value: string | null = null;
      if (source[i] === "=") {
        i++;
        value = "";
        let quoted = false;
        let pending = "";
        for (; i < length; i++) {
          c = source[i]!;
          if (c === "\n" && !quoted) break;
          if (c === "\r" && source[i + 1] === "\n" && !quoted) continue;
          if (!quoted && (c === "#" || c === ";")) {
            while (i < length && source[i] !== "\n") i++;
            break;
          }
          if (c === " " || c === "\t") {
            if (value || quoted) pending += c;
            continue;
          }
          value += pending;
          pending = "";
          if (c === '"') {
            quoted = !quoted;
            continue;
          }
          if (c === "\\") {
            const next = source[++i];
            if (next === "\n") continue;
            if (next === "\r" && source[i + 1] === "\n") {
              i++;
              continue;
            }
            const escaped: Record<string, string> = { n: "\n", t: "\t", b: "\b", '"': '"', "\\": "\\" };
            if (next === undefined || !(next in escaped)) fail();
            value += escaped[next as string];
            continue;
          }
          value += c;
        }
        if (quoted) fail();
      } else if (i < length && source[i] !== "\n" && source[i] !== "\r" && source[i] !== "#" && source[i] !== ";") {
        fail();
      }
      const key = `${section}.${name.toLowerCase()}`;
      if (section === "include" || section.startsWith("includeif.")) this.includes = true;
      const list = this.#values.get(key);
      if (list) list.push(value);
      else this.#values.set(key, [value]);
    }
  }

  #key(key: string): string {
    const first = key.indexOf(".");
    const last = key.lastIndexOf(".");
    if (first === last) return key.toLowerCase();
    return `${key.slice(0, first).toLowerCase()}${key.slice(first, last)}${key.slice(last).toLowerCase()}`;
  }

  /** The value of `key`, `null` when it is unset or has no value. */
  value(key: string): string | null {
    const list = this.#values.get(this.#key(key));
    return list ? (list[list.length - 1] ?? null) : null;
  }

  /** Every `section.sub.name` key with its last value (for `submodule.*` and `filter.*`). */
  entries(): [string, string | null][] {
    return [...this.#values].map(([key, list]) => [key, list[list.length - 1] ?? null]);
  }

  bool(key: string, fallback: boolean): boolean {
    const value = this.value(key);
    if (value === null) return fallback;
    const lower = value.toLowerCase();
    if (lower === "true" || lower === "yes" || lower === "on") return true;
    if (lower === "false" || lower === "no" || lower === "off" || lower === "") return false;
    const number = parseInteger(value);
    if (number === null) throw new Unavailable(`the config value ${key} is not a boolean`);
    return number !== 0;
  }

  int(key: string): number | null {
    const value = this.value(key);
    if (value === null) return null;
    const number = parseInteger(value);
    if (number === null) throw new Unavailable(`the config value ${key} is not a number`);
    return number;
  }
}

function parseInteger(value: string): number | null {
  const match = /^\s*([+-]?\d+)\s*([kKmMgG]?)\s*$/.exec(value);
  if (!match) return null;
  const scale = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[match[2]!.toLowerCase()]!;
  return Number(match[1]) * scale;
}
