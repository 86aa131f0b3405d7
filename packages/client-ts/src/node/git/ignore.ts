/**
 * gitignore: git's `wildmatch` and its pattern rules (dir.c). Patterns come from the
 * `.gitignore` of each directory (deeper files first), then `info/exclude`, then
 * `core.excludesFile`; within a file the last matching pattern decides; a `!` pattern
 * re-includes; a directory that is ignored ignores all below it.
 */

const NOMATCH = 1;
const MATCH = 0;
const ABORT_ALL = -1;
const ABORT_TO_STARSTAR = -2;

const CLASSES: Record<string, (c: number) => boolean> = {
  alnum: (c) => isAlpha(c) || isDigit(c),
  alpha: (c) => isAlpha(c),
  blank: (c) => c === 32 || c === 9,
  cntrl: (c) => c < 32 || c === 127,
  digit: (c) => isDigit(c),
  graph: (c) => c > 32 && c < 127,
  lower: (c) => c >= 97 && c <= 122,
  print: (c) => c >= 32 && c < 127,
  punct: (c) => c > 32 && c < 127 && !isAlpha(c) && !isDigit(c),
  space: (c) => c === 32 || (c >= 9 && c <= 13),
  upper: (c) => c >= 65 && c <= 90,
  xdigit: (c) => isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102),
};

function isAlpha(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isGlobSpecial(c: number): boolean {
  return c === 42 || c === 63 || c === 91 || c === 92;
}

/** git's dowild on byte strings; `pathname` is WM_PATHNAME. */
function dowild(pattern: string, pStart: number, text: string, tStart: number, pathname: boolean): number {
  const at = (s: string, i: number): number => (i < s.length ? s.charCodeAt(i) : 0);
  let p = pStart;
  let t = tStart;
  for (; at(pattern, p) !== 0; t++, p++) {
    let pc = at(pattern, p);
    let tc = at(text, t);
    if (tc === 0 && pc !== 42) return ABORT_ALL;
    switch (pc) {
      case 92: // backslash: the next character literally
        pc = at(pattern, ++p);
        if (tc !== pc) return NOMATCH;
        continue;
      case 63: // ?
        if (pathname && tc === 47) return NOMATCH;
        continue;
      case 42: {
        // *
        let matchSlash: boolean;
        if (at(pattern, ++p) === 42) {
          const prev = p - 2;
          while (at(pattern, ++p) === 42) {
            /* skip */
          }
          if (
            (prev < pStart || at(pattern, prev) === 47) &&
            (at(pattern, p) === 0 || at(pattern, p) === 47 || (at(pattern, p) === 92 && at(pattern, p + 1) === 47))
          ) {
            if (at(pattern, p) === 47 && dowild(pattern, p + 1, text, t, pathname) === MATCH) return MATCH;
            matchSlash = true;
          } else {
            matchSlash = false;
          }
        } else {
          matchSlash = !pathname;
        }
        if (at(pattern, p) === 0) {
          if (!matchSlash && text.indexOf("/", t) >= 0) return NOMATCH;
          return MATCH;
        } else if (!matchSlash && at(pattern, p) === 47) {
          const slash = text.indexOf("/", t);
          if (slash < 0) return NOMATCH;
          t = slash;
          break;
        }
        for (;;) {
          if (tc === 0) break;
          if (!isGlobSpecial(at(pattern, p))) {
            pc = at(pattern, p);
            while ((tc = at(text, t)) !== 0 && (matchSlash || tc !== 47)) {
              if (tc === pc) break;
              t++;
            }
            if (tc !== pc) return matchSlash ? ABORT_ALL : ABORT_TO_STARSTAR;
          }
          const matched = dowild(pattern, p, text, t, pathname);
          if (matched !== NOMATCH) {
            if (!matchSlash || matched !== ABORT_TO_STARSTAR) return matched;
          } else if (!matchSlash && tc === 47) {
            return ABORT_TO_STARSTAR;
          }
          tc = at(text, ++t);
        }
        return ABORT_ALL;
      }
      case 91: {
        // [
        pc = at(pattern, ++p);
        if (pc === 94) pc = 33; // ^ is !
        const negated = pc === 33;
        if (negated) pc = at(pattern, ++p);
        let prev = 0;
        let matched = false;
        do {
          if (!pc) return ABORT_ALL;
          if (pc === 92) {
            pc = at(pattern, ++p);
            if (!pc) return ABORT_ALL;
            if (tc === pc) matched = true;
          } else if (pc === 45 && prev && at(pattern, p + 1) && at(pattern, p + 1) !== 93) {
            pc = at(pattern, ++p);
            if (pc === 92) {
              pc = at(pattern, ++p);
              if (!pc) return ABORT_ALL;
            }
            if (tc <= pc && tc >= prev) matched = true;
            pc = 0;
          } else if (pc === 91 && at(pattern, p + 1) === 58) {
            const s = (p += 2);
            while ((pc = at(pattern, p)) && pc !== 93) p++;
            if (!pc) return ABORT_ALL;
            const length = p - s - 1;
            if (length < 0 || at(pattern, p - 1) !== 58) {
              p = s - 2;
              pc = 91;
              if (tc === pc) matched = true;
              prev = pc;
              pc = at(pattern, ++p);
              if (pc === 93) break;
              continue;
            }
            const test = CLASSES[pattern.slice(s, s + length)];
            if (!test) return ABORT_ALL;
            if (test(tc)) matched = true;
            pc = 0;
          } else if (tc === pc) {
            matched = true;
          }
          prev = pc;
          pc = at(pattern, ++p);
        } while (pc !== 93);
        if (matched === negated || (pathname && tc === 47)) return NOMATCH;
        continue;
      }
      default:
        if (tc !== pc) return NOMATCH;
        continue;
    }
  }
  return at(text, t) ? NOMATCH : MATCH;
}

export function wildmatch(pattern: string, text: string, pathname: boolean): boolean {
  return dowild(pattern, 0, text, 0, pathname) === MATCH;
}

interface Pattern {
  readonly pattern: string;
  readonly negative: boolean;
  readonly mustBeDir: boolean;
  readonly noDir: boolean;
}

/** The patterns of one file, with the directory they apply from (`""`: the top; else
 * ending without `/`). */
export class PatternList {
  readonly patterns: Pattern[] = [];

  constructor(
    source: string,
    readonly base: string,
  ) {
    let body = source.startsWith("\xef\xbb\xbf") ? source.slice(3) : source;
    if (!body.endsWith("\n")) body += "\n";
    for (let line of body.split("\n").slice(0, -1)) {
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (!line || line.startsWith("#")) continue;
      line = trimTrailingSpaces(line);
      let negative = false;
      if (line.startsWith("!")) {
        negative = true;
        line = line.slice(1);
      }
      let mustBeDir = false;
      if (line.endsWith("/")) {
        mustBeDir = true;
        line = line.slice(0, -1);
      }
      this.patterns.push({ pattern: line, negative, mustBeDir, noDir: !line.includes("/") });
    }
  }

  /** The last pattern matching `path` (a path from the top; `name` its last part), or null. */
  match(path: string, name: string, isDir: boolean): Pattern | null {
    for (let i = this.patterns.length - 1; i >= 0; i--) {
      const pattern = this.patterns[i]!;
      if (pattern.mustBeDir && !isDir) continue;
      if (pattern.noDir) {
        if (wildmatch(pattern.pattern, name, false)) return pattern;
      } else if (matchPathname(path, this.base, pattern.pattern)) {
        return pattern;
      }
    }
    return null;
  }
}

function trimTrailingSpaces(line: string): string {
  let lastSpace = -1;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === " ") {
      if (lastSpace < 0) lastSpace = i;
    } else if (c === "\\") {
      i++;
      if (i >= line.length) return line;
      lastSpace = -1;
    } else {
      lastSpace = -1;
    }
  }
  return lastSpace >= 0 ? line.slice(0, lastSpace) : line;
}

function matchPathname(path: string, base: string, pattern: string): boolean {
  const body = pattern.startsWith("/") ? pattern.slice(1) : pattern;
  if (base) {
    if (path.length < base.length + 1 || path[base.length] !== "/" || !path.startsWith(base)) return false;
    return wildmatch(body, path.slice(base.length + 1), true);
  }
  return wildmatch(body, path, true);
}

/** Whether `path` is ignored by the first list (in priority order) with a matching
 * pattern; `null` when none matches. */
export function ignoredBy(lists: readonly PatternList[], path: string, isDir: boolean): boolean | null {
  const slash = path.lastIndexOf("/");
  const name = slash < 0 ? path : path.slice(slash + 1);
  for (const list of lists) {
    const found = list.match(path, name, isDir);
    if (found) return !found.negative;
  }
  return null;
}
