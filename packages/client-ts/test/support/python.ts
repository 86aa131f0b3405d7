/** What the Python client resolves for the same cases (test/support/python_values.py). */

import { execFileSync } from "node:child_process";
import { join } from "node:path";

import { PACKAGE, PYTHON, REPO } from "./paths.js";

export interface Case {
  cwd: string;
  roots?: string[] | null;
  keys: string[];
}

export function pythonValues(cases: Case[]): Record<string, string | null>[] {
  const output = execFileSync(PYTHON, [join(PACKAGE, "test", "support", "python_values.py")], {
    cwd: REPO,
    input: JSON.stringify(cases),
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    timeout: 120_000,
  });
  return JSON.parse(output) as Record<string, string | null>[];
}
