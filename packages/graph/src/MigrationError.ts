/**
 * The migrator's error, in the shape of `FalkorError`: a `MigrationError` whose `reason` is one
 * of the tagged reason classes below, so `Effect.catchReason("MigrationError", "Failed", …)`
 * picks one. `message` and `hint` come from the reason.
 *
 * @example
 * ```ts
 * import * as GraphMigrator from "@effect-falkordb/graph/GraphMigrator"
 * import { Effect } from "effect"
 *
 * const migrate = GraphMigrator.run({
 *   graph: "social",
 *   loader: GraphMigrator.fromRecord({ "1_people": "CREATE INDEX FOR (p:Person) ON (p.name)" })
 * }).pipe(
 *   // Another instance kept the lock too long: start without waiting for it.
 *   Effect.catchReason("MigrationError", "Locked", (locked) => Effect.logWarning(locked.message).pipe(Effect.as([])))
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Predicate from "effect/Predicate"

const TypeId = "~@effect-falkordb/graph/MigrationError" as const
const ReasonTypeId = "~@effect-falkordb/graph/MigrationError/Reason" as const

/**
 * Two or more migrations share an id. Found before anything runs.
 *
 * @since 0.1.0
 * @category reasons
 */
export class DuplicateId extends Data.TaggedError("DuplicateId")<{
  /** Each id used more than once, with the names that use it. */
  readonly duplicates: ReadonlyArray<readonly [id: number, names: ReadonlyArray<string>]>
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    const list = this.duplicates.map(([id, names]) => `${id} (${names.join(", ")})`).join("; ")
    return `migration ids used more than once: ${list}; nothing was run`
  }
  get hint(): string {
    return "give every migration its own id (the number before the first underscore)"
  }
}

/**
 * A migration key or file name that is not `<id>_<name>` with a positive integer id. Found
 * before anything runs.
 *
 * @since 0.1.0
 * @category reasons
 */
export class InvalidName extends Data.TaggedError("InvalidName")<{
  readonly name: string
  readonly detail: string
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `invalid migration name ${JSON.stringify(this.name)}: ${this.detail}; nothing was run`
  }
  get hint(): string {
    return "name migrations <id>_<name>, e.g. 1_create_people or 0002_seed.cypher"
  }
}

/**
 * An option of `run` is out of its domain (a lease too short to renew, a duration that does
 * not parse, an empty key). Found before anything runs.
 *
 * @since 0.1.0
 * @category reasons
 */
export class InvalidOption extends Data.TaggedError("InvalidOption")<{
  readonly option: string
  readonly detail: string
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `invalid migrator option ${this.option}: ${this.detail}; nothing was run`
  }
  get hint(): string {
    return "lockTtl is a finite duration of at least 1 second, lockTimeout a duration, graph/key/lockKey non-empty"
  }
}

/**
 * A migration could not be loaded (import failed, no default export, not a migration, an
 * unreadable or malformed `.cypher` file). Migrations before it stay recorded.
 *
 * @since 0.1.0
 * @category reasons
 */
export class LoadFailed extends Data.TaggedError("LoadFailed")<{
  readonly id: number
  readonly name: string
  readonly detail: string
  readonly cause?: unknown
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `could not load migration ${this.id}_${this.name}: ${this.detail}`
  }
  get hint(): string {
    return "a migration is Cypher text, a cypher query, a list of them, an Effect or a function of the Graph (as the default export of a file)"
  }
}

/**
 * A migration failed. It is not recorded; the run stopped there. `cause` is its error.
 *
 * @since 0.1.0
 * @category reasons
 */
export class Failed extends Data.TaggedError("Failed")<{
  readonly id: number
  readonly name: string
  readonly cause: unknown
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    const cause = Predicate.hasProperty(this.cause, "message") ? String(this.cause.message) : String(this.cause)
    return `migration ${this.id}_${this.name} failed and was not recorded: ${cause}`
  }
  get hint(): string {
    return "fix the migration and run again; statements of it that ran before the failure stay applied (no transactions)"
  }
}

/**
 * Another migrator held the lock for longer than `lockTimeout`. Nothing was run.
 *
 * @since 0.1.0
 * @category reasons
 */
export class Locked extends Data.TaggedError("Locked")<{
  readonly lockKey: string
  readonly waited: Duration.Duration
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `another migrator held the lock ${JSON.stringify(this.lockKey)} for more than ${Duration.format(this.waited)}; nothing was run`
  }
  get hint(): string {
    return "wait for the other migrator (a longer lockTimeout), or delete the lock key if its holder died and you cannot wait for its lease to expire"
  }
}

/**
 * The lease on the lock expired while a migration ran (the process stalled past `lockTtl`):
 * the migration ran but was not recorded, since another migrator may have taken over.
 *
 * @since 0.1.0
 * @category reasons
 */
export class LockLost extends Data.TaggedError("LockLost")<{
  readonly lockKey: string
  readonly id: number
  readonly name: string
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `the lock ${JSON.stringify(this.lockKey)} was lost while migration ${this.id}_${this.name} ran; it was not recorded`
  }
  get hint(): string {
    return "raise lockTtl above the longest pause of this process; check the record (applied) before running again"
  }
}

/**
 * The record key holds something this migrator did not write (another type, a field that is
 * not an id, a value that is not its JSON).
 *
 * @since 0.1.0
 * @category reasons
 */
export class BadState extends Data.TaggedError("BadState")<{
  readonly key: string
  readonly detail: string
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `the migration record ${JSON.stringify(this.key)} is not readable: ${this.detail}`
  }
  get hint(): string {
    return "point key at a hash only the migrator writes"
  }
}

/**
 * `ensureIndexes`: an index exists on the property with other options than asked (a vector
 * index of another dimension or similarity function). It is left as it is.
 *
 * @since 0.1.0
 * @category reasons
 */
export class SchemaMismatch extends Data.TaggedError("SchemaMismatch")<{
  readonly what: string
  readonly existing: string
  readonly wanted: string
}> {
  readonly [ReasonTypeId] = ReasonTypeId
  override get message(): string {
    return `${this.what} exists with ${this.existing}, not ${this.wanted}; it was left as it is`
  }
  get hint(): string {
    return "drop the index in a migration and create it with the new options, or change the declaration"
  }
}

/**
 * The reasons of a `MigrationError`.
 *
 * @since 0.1.0
 * @category models
 */
export type MigrationErrorReason =
  | DuplicateId
  | InvalidName
  | InvalidOption
  | LoadFailed
  | Failed
  | Locked
  | LockLost
  | BadState
  | SchemaMismatch

/**
 * The migrator's error; `Effect.catchReason("MigrationError", "Failed", …)` picks one reason.
 *
 * @since 0.1.0
 * @category errors
 */
export class MigrationError extends Data.TaggedError("MigrationError")<{ readonly reason: MigrationErrorReason }> {
  readonly [TypeId] = TypeId
  /** The reason, as the standard `cause`. */
  override readonly cause: MigrationErrorReason = this.reason
  override get message(): string {
    return this.reason.message
  }
  /** What to do about it. */
  get hint(): string {
    return this.reason.hint
  }
}

/**
 * True for a `MigrationError`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isMigrationError = (u: unknown): u is MigrationError => Predicate.hasProperty(u, TypeId)
