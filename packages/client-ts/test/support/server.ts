/**
 * A real sysprompt server for the tests: the project's gunicorn (its gunicorn.conf.py,
 * one worker, one thread) on a temporary SQLite database, DEBUG off, its access log in a
 * file. The requests a client made are counted in that log, the server's own record of
 * what reached it. A test can stop the server and start it again on the same port.
 *
 * Preparing a database (migrate, an agent host and an author with their tokens, and the
 * named prompts support/triage and support/old, archived, beside default) costs a
 * Python start; scripts/test.mjs prepares one before the tests and every server copies
 * it (SYSPROMPT_TS_TEST_DATABASE); a test file run alone prepares its own.
 */

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, openSync, readFileSync, closeSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

import { cleanup, temporary } from "./git.js";
import { PYTHON, REPO } from "./paths.js";

const PREPARE = `
from django.core.management import call_command
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from django.utils import timezone
from sysprompt.accounts.services import agent_host_ensure
from sysprompt.prompts.models import Prompt
call_command("migrate", "--noinput", verbosity=0)
# A second named prompt (its template is saved by the tests that use it), and an archived one.
Prompt.objects.create(name="support/triage", description="Support tickets.", created_at=timezone.now(), updated_at=timezone.now())
Prompt.objects.create(name="support/old", archived=True, created_at=timezone.now(), updated_at=timezone.now())
host = agent_host_ensure(name="ts-host")
author = get_user_model().objects.create_superuser(username="ts-author", email="", password=None)
print("TOKENS", host.token, Token.objects.create(user=author).key)
`;

export interface Prepared {
  database: string;
  token: string;
  authorToken: string;
}

function baseEnv(database: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(SYSPROMPT_|DJANGO_|GUNICORN_|WEB_CONCURRENCY|DATABASE_URL)/.test(key)) env[key] = value;
  }
  return {
    ...env,
    DATABASE_URL: `sqlite:///${database}`,
    SECRET_KEY: "typescript-client-tests-only",
    DEBUG: "false",
    ALLOWED_HOSTS: "127.0.0.1,localhost",
    PYTHONUNBUFFERED: "1",
    PYTHONDONTWRITEBYTECODE: "1",
  };
}

/** Migrate a fresh SQLite database in `folder` and create the tokens. */
export function prepare(folder: string): Prepared {
  const database = join(folder, "template.sqlite3");
  const done = spawnSync(PYTHON, ["manage.py", "shell", "--no-imports", "-c", PREPARE], {
    cwd: REPO,
    env: baseEnv(database),
    encoding: "utf8",
    timeout: 300_000,
  });
  const line = done.stdout?.split("\n").find((text) => text.startsWith("TOKENS "));
  if (done.status !== 0 || !line) throw new Error(`preparing the database failed:\n${done.stdout}${done.stderr}`);
  const [, token, authorToken] = line.trim().split(" ") as [string, string, string];
  return { database, token, authorToken };
}

let shared: Prepared | null = null;

/** The prepared database of this run (scripts/test.mjs's, else one made now). */
export function prepared(): Prepared {
  if (shared) return shared;
  const given = process.env["SYSPROMPT_TS_TEST_DATABASE"];
  if (given) {
    shared = JSON.parse(readFileSync(given, "utf8")) as Prepared;
  } else {
    const folder = temporary("sysprompt-ts-db-");
    shared = prepare(folder);
    process.on("exit", () => cleanup(folder));
  }
  return shared;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

export class RealServer {
  readonly folder: string;
  readonly root: string;
  readonly cwd: string;
  readonly token: string;
  readonly authorToken: string;
  readonly accessLog: string;
  readonly env: NodeJS.ProcessEnv;
  port = 0;
  #process: ChildProcess | null = null;
  #sync = 0;

  constructor(options: { env?: Record<string, string> } = {}) {
    const base = prepared();
    this.folder = temporary("sysprompt-ts-server-");
    this.root = join(this.folder, "root");
    this.cwd = join(this.root, "project");
    mkdirSync(this.cwd, { recursive: true });
    writeFileSync(join(this.cwd, "AGENTS.md"), "Run the tests before you commit.\n");
    const database = join(this.folder, "db.sqlite3");
    copyFileSync(base.database, database);
    this.token = base.token;
    this.authorToken = base.authorToken;
    this.accessLog = join(this.folder, "access.log");
    this.env = {
      ...baseEnv(database),
      SYSPROMPT_ALLOWED_ROOTS: this.root,
      GUNICORN_ACCESS_LOG: this.accessLog,
      WEB_CONCURRENCY: "1",
      GUNICORN_THREADS: "1",
      GUNICORN_GRACEFUL_TIMEOUT: "2",
      ...options.env,
    };
  }

  get running(): boolean {
    return this.#process !== null && this.#process.exitCode === null;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    const log = openSync(join(this.folder, "gunicorn.log"), "a");
    this.#process = spawn(join(REPO, ".venv", "bin", "gunicorn"), [], {
      cwd: REPO,
      env: { ...this.env, GUNICORN_BIND: `127.0.0.1:${this.port}` },
      stdio: ["ignore", log, log],
      detached: true,
    });
    closeSync(log);
    const started = this.#process;
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (started.exitCode !== null) throw new Error(`gunicorn exited:\n${this.tail()}`);
      try {
        const response = await fetch(`${this.url}/api/health`, { headers: { Authorization: `Token ${this.token}` } });
        await response.text();
        if (response.status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`gunicorn did not answer:\n${this.tail()}`);
      await sleep(100);
    }
  }

  async stop(): Promise<void> {
    const child = this.#process;
    this.#process = null;
    if (!child || child.exitCode !== null || child.pid === undefined) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    process.kill(-child.pid, "SIGTERM");
    const killed = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // gone already
      }
    }, 10_000);
    await exited;
    clearTimeout(killed);
  }

  async close(): Promise<void> {
    await this.stop();
    cleanup(this.folder);
  }

  tail(): string {
    const path = join(this.folder, "gunicorn.log");
    return existsSync(path) ? readFileSync(path, "utf8").split("\n").slice(-30).join("\n") : "(no log)";
  }

  /** The request lines of the access log (`"METHOD /path?query HTTP/1.1" status`). */
  lines(): string[] {
    if (!existsSync(this.accessLog)) return [];
    return readFileSync(this.accessLog, "utf8")
      .split("\n")
      .map((line) => /"([A-Z]+ \S+) HTTP\/[\d.]+" (\d{3})/.exec(line))
      .filter((match): match is RegExpExecArray => match !== null)
      .map((match) => `${match[1]} ${match[2]}`);
  }

  /** Waits until every request sent before this call is in the access log: a marked
   * request is sent and awaited in the log (one worker, one thread: requests are handled
   * and logged in turn, so the mark's line comes after every earlier one's). */
  async synced(): Promise<string[]> {
    const mark = `/api/health?sync=${++this.#sync}`;
    const response = await fetch(this.url + mark, { headers: { Authorization: `Token ${this.token}` } });
    await response.text();
    const deadline = Date.now() + 30_000;
    for (;;) {
      const lines = this.lines();
      const at = lines.findIndex((line) => line.startsWith(`GET ${mark} `));
      if (at >= 0) return lines.filter((line) => !line.startsWith("GET /api/health"));
      if (Date.now() > deadline) throw new Error("the access log never showed the sync request");
      await sleep(20);
    }
  }

  /** How many logged requests (health checks aside) start with `prefix` ("POST /api/…"). */
  async count(prefix: string): Promise<number> {
    return (await this.synced()).filter((line) => line.startsWith(prefix)).length;
  }

  /** One request as another party (the host itself from elsewhere, or the author). */
  async api(method: string, path: string, body?: unknown, author = false): Promise<{ status: number; data: unknown; headers: Headers }> {
    const response = await fetch(this.url + path, {
      method,
      headers: {
        Authorization: `Token ${author ? this.authorToken : this.token}`,
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, data: text ? (JSON.parse(text) as unknown) : null, headers: response.headers };
  }

  /** Saves the template of `prompt` (default: today's route, the prompt default). */
  async setTemplate(text: string, prompt: string | null = null): Promise<void> {
    const path = prompt === null ? "/api/system-prompt" : `/api/prompts/${prompt}/-/system-prompt`;
    const answer = await this.api("PUT", path, { template: text }, true);
    if (answer.status !== 200) throw new Error(`saving the template: ${answer.status} ${JSON.stringify(answer.data)}`);
  }
}
