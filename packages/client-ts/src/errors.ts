/**
 * The errors the client throws, one class per kind of failure, as the Python client's.
 *
 * Every error is a {@link SyspromptError} carrying `status` (the HTTP status, or `null`
 * when no answer came) and `message` (the server's own sentence when it gave one). A 4xx
 * is the caller's error and is always thrown; a {@link ServerError} (5xx, unreachable,
 * timed out) is what the fallback answers for on a first turn.
 */

export class SyspromptError extends Error {
  /** The HTTP status; `null` when the server gave no answer. */
  readonly status: number | null;
  /** The decoded JSON answer, when there was one. */
  readonly body: unknown;

  constructor(message: string, options: { status?: number | null; body?: unknown } = {}) {
    super(message);
    this.name = new.target.name;
    this.status = options.status ?? null;
    this.body = options.body ?? null;
  }
}

/** 400, 413, 415, 422: the request was refused as it is; `errors` holds the server's
 * field errors (`{"cwd": ["…"]}`), empty when it answered a `detail`. */
export class InvalidRequest extends SyspromptError {
  readonly errors: Readonly<Record<string, readonly string[]>>;

  constructor(
    message: string,
    options: { status?: number | null; body?: unknown; errors?: Record<string, string[]> } = {},
  ) {
    super(message, options);
    this.errors = options.errors ?? {};
  }
}

/** 401: no token, an unknown token, or an inactive user. */
export class Unauthorized extends SyspromptError {}
/** 403: the token's user lacks a permission. */
export class Forbidden extends SyspromptError {}
/** 404: nothing stored under that conversation id, or not visible to this token. */
export class NotFound extends SyspromptError {}
/** 409: the request conflicts with the server's current state. */
export class Conflict extends SyspromptError {}
/** 410: the named prompt is archived and starts no new conversation (the message names
 * it); its conversations keep their frozen prompts. */
export class Gone extends SyspromptError {}
/** 412: an `If-Match` did not name the current version. */
export class PreconditionFailed extends Conflict {}
/** 5xx: the server failed. A first turn answers the fallback instead, when one is set. */
export class ServerError extends SyspromptError {}
/** The server could not be reached, timed out, or cannot serve now (503, 429). */
export class Unavailable extends ServerError {}

type ErrorClass = new (
  message: string,
  options: { status?: number | null; body?: unknown; errors?: Record<string, string[]> },
) => SyspromptError;

const BY_STATUS: Record<number, ErrorClass> = {
  400: InvalidRequest,
  401: Unauthorized,
  403: Forbidden,
  404: NotFound,
  409: Conflict,
  410: Gone,
  412: PreconditionFailed,
  413: InvalidRequest,
  415: InvalidRequest,
  422: InvalidRequest,
  429: Unavailable,
  503: Unavailable,
};

/** The error of an error answer: its class from `status`, its message from the server's
 * JSON (`detail`, or the field errors joined) or else the reason phrase. */
export function errorFor(status: number, body: unknown, reason = ""): SyspromptError {
  const errors: Record<string, string[]> = {};
  let message = (body as { detail?: unknown } | null)?.detail;
  if (typeof message !== "string") {
    if (body && typeof body === "object" && !Array.isArray(body)) {
      for (const [field, items] of Object.entries(body)) {
        errors[field] = [items].flat().map((item) => (typeof item === "string" ? item : JSON.stringify(item)));
      }
    }
    message = Object.entries(errors)
      .map(([field, items]) => `${field}: ${items.join(" ")}`)
      .join("; ");
  }
  message ||= reason || `HTTP ${status}`;
  const cls: ErrorClass = BY_STATUS[status] ?? (status >= 500 ? ServerError : SyspromptError);
  return new cls(message as string, { status, body, errors });
}
