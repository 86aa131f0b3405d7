/** What the Python client does for the same cases: the host-local values it resolves
 * (test/support/python_values.py) and a first turn (test/support/python_turn.py). */

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

export function pythonTurn(
  url: string,
  token: string,
  conversation: string,
  cwd: string,
): { sha256: string | null; text: string | null; is_fallback: boolean } {
  const output = execFileSync(PYTHON, [join(PACKAGE, "test", "support", "python_turn.py"), url, token, conversation, cwd], {
    cwd: REPO,
    encoding: "utf8",
    timeout: 120_000,
  });
  return JSON.parse(output) as { sha256: string | null; text: string | null; is_fallback: boolean };
}

export interface MessageCall {
  fn: string;
  args: unknown[];
  kwargs?: Record<string, unknown>;
}

export function pythonMessages(calls: MessageCall[]): unknown[] {
  const output = execFileSync(PYTHON, [join(PACKAGE, "test", "support", "python_messages.py")], {
    cwd: REPO,
    input: JSON.stringify(calls),
    encoding: "utf8",
    timeout: 120_000,
  });
  return JSON.parse(output) as unknown[];
}
