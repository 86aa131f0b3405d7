/** What a resolution of host-local values shares: its limits, roots, clock and reads. */

/** A value that does not exist, and why (sent as `null`; the reason is for people). */
export class Missing {
  constructor(readonly reason: string) {}
}

export type Value = string | Missing;

/** The bounds of a resolution (the Python core's defaults). */
export interface Limits {
  /** The largest file `file:` reads, and the largest `git:status` (1 MiB). */
  maxFileBytes: number;
  /** What the files of one resolution may read together (8 MiB). */
  maxReadBytes: number;
  /** Seconds reading a repository may take (2). */
  gitTimeout: number;
  /** The most files (index entries and work-tree entries together) `git:status` looks
   * at; past it the status is missing (100,000). */
  maxGitFiles: number;
}

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  maxFileBytes: 1_048_576,
  maxReadBytes: 8 * 1_048_576,
  gitTimeout: 2,
  maxGitFiles: 100_000,
});

/** One resolution: the working directory's real path (a byte string), the real allowed
 * roots (byte strings), the limits, the time it was made, and the read account. */
export interface Resolution {
  readonly cwd: string;
  readonly directory: string;
  readonly roots: readonly string[];
  readonly limits: Limits;
  readonly now: Date;
  used: number;
  readonly files: Map<string, Value>;
}
