/**
 * Host-local values: which references the host resolves itself (the pure part; the
 * reading is `@sysprompt/client/node`'s). The client asks the server which references
 * the template can reach and which host-local types it leaves to the host (`GET
 * /api/system-prompt/references`: `references` and `host_resolves`), and picks the keys
 * as the Python client does ({@link hostKeys}).
 */

/** Types whose every name is host-local. */
export const HOST_LOCAL_TYPES: ReadonlySet<string> = new Set(["git", "file", "system"]);
/** Single host-local names of other types. */
export const HOST_LOCAL_KEYS: ReadonlySet<string> = new Set(["prompt:cwd"]);

function split(key: string): [string, string] | null {
  const colon = key.indexOf(":");
  return colon < 0 ? null : [key.slice(0, colon), key.slice(colon + 1)];
}

/** Whether `"type:name"` is a value the host resolves (`prompt:cwd`, `git:`, `file:`, `system:`). */
export function isHostLocal(key: string): boolean {
  const parts = split(key);
  return parts !== null && parts[1] !== "" && (HOST_LOCAL_TYPES.has(parts[0]) || HOST_LOCAL_KEYS.has(key));
}

/** The `"type:name"` keys of a references answer (items are keys, `{key}` or `{type,
 * name}` objects; a bare list is taken too), each once, in order. */
export function referencesFromJson(data: unknown): string[] {
  const items = data !== null && typeof data === "object" && !Array.isArray(data)
    ? (data as Record<string, unknown>)["references"]
    : data;
  if (!Array.isArray(items)) throw new TypeError("the answer has no 'references' list");
  const keys = new Set<string>();
  for (const item of items) {
    if (typeof item === "string") keys.add(item);
    else if (item !== null && typeof item === "object") {
      const record = item as Record<string, unknown>;
      if (typeof record["key"] === "string") keys.add(record["key"]);
      else if (typeof record["type"] === "string") {
        const name = record["name"] ?? "";
        keys.add(`${record["type"]}:${String(name)}`);
      }
    }
  }
  return [...keys];
}

/** The types of a references answer's `host_resolves`; `null` when it does not say. */
export function hostResolvesFromJson(data: unknown): ReadonlySet<string> | null {
  if (data === null || typeof data !== "object" || Array.isArray(data)) return null;
  const items = (data as Record<string, unknown>)["host_resolves"];
  if (!Array.isArray(items)) return null;
  return new Set(items.filter((item): item is string => typeof item === "string"));
}

/** The references the host resolves itself: those of the types in `hostResolves`; every
 * host-local one with `everything`, or when the server did not say (`null`). */
export function hostKeys(
  references: Iterable<string>,
  hostResolves: ReadonlySet<string> | null,
  everything = false,
): string[] {
  const local = [...new Set(references)].filter(isHostLocal);
  if (everything || hostResolves === null) return local;
  return local.filter((key) => hostResolves.has(key.slice(0, key.indexOf(":"))));
}
