/** Where the tests find the package, the repository and its Python. */

import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The package's folder (the tests run from build/test/). */
export const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const REPO = resolve(PACKAGE, "..", "..");
/** The repository's Python (its .venv), or SYSPROMPT_PYTHON. */
export const PYTHON = process.env["SYSPROMPT_PYTHON"] ?? join(REPO, ".venv", "bin", "python");

export function pythonAvailable(): boolean {
  return existsSync(PYTHON);
}
