/**
 * Unique and mandatory constraints of one graph: `GRAPH.CONSTRAINT CREATE/DROP`, the list
 * from `db.constraints()` typed, and waiting until a constraint is operational.
 *
 * The server answers `CREATE` with `PENDING` and checks the existing data in the
 * background: the constraint is `UNDER CONSTRUCTION`, then `OPERATIONAL`, or `FAILED` when
 * the data violates it. {@link Constraints.awaitOperational} polls and surfaces `FAILED` as
 * the reason `ConstraintFailed` naming the constraint, the deadline as `WaitTimeout` with the
 * last status. A unique constraint needs a range index on the same label and properties
 * (reason `MissingIndex`): `create({ …, createIndex: true })` creates it and asks again.
 *
 * Labels and property names travel as separate command arguments, never inside query text.
 *
 * @example
 * ```ts
 * import * as Constraints from "@effect-falkordb/graph/Constraints"
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const db = yield* FalkorDB.FalkorDB
 *   const constraints = Constraints.make(db.graph("users"), db.connection)
 *   const spec = { kind: "UNIQUE", label: "User", properties: ["email"], createIndex: true } as const
 *   yield* constraints.create(spec)
 *   yield* constraints.awaitOperational(spec, { timeout: "30 seconds" })
 * })
 * ```
 *
 * @since 0.1.0
 */
import type { RedisConnection } from "@effect-falkordb/redis/RedisConnection"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { type FalkorError, fromRedis } from "./FalkorError.ts"
import type { Graph } from "./Graph.ts"
import { constraintFailed, invalidArgument, malformed, waitTimeout } from "./internal/errors.ts"
import * as Indexes from "./Indexes.ts"
import type { Row } from "./Row.ts"
import { text as textOf } from "./internal/Text.ts"

/**
 * The constraint kinds.
 *
 * @since 0.1.0
 * @category models
 */
export type ConstraintKind = "UNIQUE" | "MANDATORY"

/**
 * A constraint's identity.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConstraintSpec {
  readonly kind: ConstraintKind
  readonly label: string
  readonly properties: ReadonlyArray<string>
  /** Default `"NODE"`. */
  readonly entityType?: Indexes.EntityType | undefined
}

/**
 * Options of `create`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CreateSpec extends ConstraintSpec {
  /**
   * For `UNIQUE`: when the server reports the missing supporting index, create the range
   * index on the same label and properties, then the constraint. Default `false` (the error
   * says what to do).
   */
  readonly createIndex?: boolean | undefined
}

/**
 * A constraint's state: `UNDER CONSTRUCTION`, `OPERATIONAL`, `FAILED`.
 *
 * @since 0.1.0
 * @category models
 */
export type ConstraintStatus = "UNDER CONSTRUCTION" | "OPERATIONAL" | "FAILED"

/**
 * One row of `CALL db.constraints()`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConstraintInfo {
  readonly kind: ConstraintKind
  readonly label: string
  readonly properties: ReadonlyArray<string>
  readonly entityType: Indexes.EntityType
  readonly status: ConstraintStatus
}

/**
 * How long to wait.
 *
 * @since 0.1.0
 * @category models
 */
export interface AwaitOptions {
  /** Default 60 seconds. */
  readonly timeout?: Duration.Input | undefined
  /** The polling schedule. Default: every 100 ms, doubling up to 1 second. */
  readonly schedule?: Schedule.Schedule<unknown, unknown> | undefined
}

/**
 * The constraint operations of one graph.
 *
 * @since 0.1.0
 * @category models
 */
export interface Constraints {
  /**
   * `GRAPH.CONSTRAINT CREATE`: the server's answer (`PENDING`); the check runs in the
   * background. An existing constraint fails with `ConstraintExists`, a unique one without
   * its index with `MissingIndex` (unless `createIndex`).
   */
  readonly create: (spec: CreateSpec) => Effect.Effect<string, FalkorError>
  /** `GRAPH.CONSTRAINT DROP`; a missing constraint fails with `ConstraintNotFound`. */
  readonly drop: (spec: ConstraintSpec) => Effect.Effect<void, FalkorError>
  /** `CALL db.constraints()`, typed. */
  readonly list: () => Effect.Effect<ReadonlyArray<ConstraintInfo>, FalkorError>
  /**
   * Polls until the constraint is `OPERATIONAL`; `FAILED` fails with `ConstraintFailed`
   * naming it, the deadline (or an exhausted schedule) with `WaitTimeout` showing the last
   * status, a constraint that is not listed with `InvalidArgument`.
   */
  readonly awaitOperational: (
    spec: ConstraintSpec,
    options?: AwaitOptions
  ) => Effect.Effect<ConstraintInfo, FalkorError>
}

/**
 * The arguments of `GRAPH.CONSTRAINT <CREATE|DROP>` after the subcommand.
 *
 * @since 0.1.0
 * @category command
 */
export const constraintCommand = (
  action: "CREATE" | "DROP",
  graph: string,
  spec: ConstraintSpec
): ReadonlyArray<string> => {
  if (spec.kind !== "UNIQUE" && spec.kind !== "MANDATORY") {
    throw invalidArgument("kind", `a constraint is UNIQUE or MANDATORY, got ${String(spec.kind)}`, graph)
  }
  if (spec.properties.length === 0)
    throw invalidArgument("properties", "a constraint needs at least one property", graph)
  if (spec.label.length === 0 || spec.properties.some((p) => p.length === 0)) {
    throw invalidArgument("label", "constraint labels and property names must not be empty", graph)
  }
  return [
    "GRAPH.CONSTRAINT",
    action,
    graph,
    spec.kind,
    spec.entityType ?? "NODE",
    spec.label,
    "PROPERTIES",
    String(spec.properties.length),
    ...spec.properties
  ]
}

/**
 * Names a constraint as the errors show it: `UNIQUE (:User {id})`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describe = (spec: ConstraintSpec): string => {
  const properties = `{${spec.properties.join(", ")}}`
  return spec.entityType === "RELATIONSHIP"
    ? `${spec.kind} [:${spec.label} ${properties}]`
    : `${spec.kind} (:${spec.label} ${properties})`
}

/**
 * Parses one row of `CALL db.constraints()`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseConstraintRow = (row: Row, graph: string): ConstraintInfo => {
  const bad = (column: string) =>
    malformed(`db.constraints() column ${column} has an unexpected value`, graph, "db.constraints")
  const kind = row.get("type")
  const label = row.get("label")
  const properties = row.get("properties")
  const entityType = row.get("entitytype") ?? "NODE"
  const status = row.get("status") ?? "OPERATIONAL"
  if (kind !== "UNIQUE" && kind !== "MANDATORY") throw bad("type")
  if (typeof label !== "string") throw bad("label")
  if (!Array.isArray(properties) || !properties.every((p) => typeof p === "string")) throw bad("properties")
  if (entityType !== "NODE" && entityType !== "RELATIONSHIP") throw bad("entitytype")
  if (status !== "UNDER CONSTRUCTION" && status !== "OPERATIONAL" && status !== "FAILED") throw bad("status")
  return { kind, label, properties: properties as ReadonlyArray<string>, entityType, status }
}

const same = (info: ConstraintInfo, spec: ConstraintSpec) =>
  info.kind === spec.kind &&
  info.label === spec.label &&
  info.entityType === (spec.entityType ?? "NODE") &&
  info.properties.length === spec.properties.length &&
  info.properties.every((p, i) => p === spec.properties[i])

/**
 * The constraint operations of `graph`, sending `GRAPH.CONSTRAINT` through `connection`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (graph: Graph, connection: RedisConnection["Service"]): Constraints => {
  const name = graph.name
  const send = (action: "CREATE" | "DROP", spec: ConstraintSpec) =>
    Effect.try({ try: () => constraintCommand(action, name, spec), catch: (e) => e as FalkorError }).pipe(
      Effect.flatMap((command) =>
        connection
          .execute(command)
          .pipe(Effect.mapError((error) => fromRedis(error, { graph: name, command: "GRAPH.CONSTRAINT" })))
      ),
      Effect.flatMap((reply) => {
        const text = textOf(reply)
        return text === undefined
          ? Effect.fail(malformed(`GRAPH.CONSTRAINT ${action} replied no status`, name, "GRAPH.CONSTRAINT"))
          : Effect.succeed(text)
      })
    )

  const create = (spec: CreateSpec): Effect.Effect<string, FalkorError> =>
    send("CREATE", spec).pipe(
      Effect.catchIf(
        (error) => error.reason._tag === "MissingIndex" && spec.createIndex === true,
        () =>
          Indexes.make(graph)
            .createRange({ label: spec.label, properties: spec.properties, entityType: spec.entityType })
            .pipe(Effect.andThen(send("CREATE", spec)))
      ),
      Effect.withSpan("Constraints.create", { attributes: { "db.namespace": name } })
    )

  const list = () =>
    graph.roQuery("CALL db.constraints()").pipe(
      Effect.flatMap((result) =>
        Effect.try({
          try: () => result.rows.map((row) => parseConstraintRow(row, name)),
          catch: (e) => e as FalkorError
        })
      ),
      Effect.withSpan("Constraints.list", { attributes: { "db.namespace": name } })
    )

  const awaitOperational = (spec: ConstraintSpec, options: AwaitOptions = {}) => {
    let last: ConstraintInfo | undefined
    const schedule = options.schedule ?? Schedule.min([Schedule.exponential("100 millis"), Schedule.spaced("1 second")])
    const gaveUp = () =>
      last === undefined
        ? invalidArgument("constraint", `there is no constraint ${describe(spec)}`, name, "db.constraints")
        : waitTimeout(`the constraint ${describe(spec)}`, last.status, name)
    const poll = Effect.flatMap(list(), (all): Effect.Effect<ConstraintInfo, FalkorError | "pending"> => {
      last = all.find((info) => same(info, spec))
      if (last?.status === "OPERATIONAL") return Effect.succeed(last)
      if (last?.status === "FAILED") return Effect.fail(constraintFailed(describe(spec), name))
      return Effect.fail("pending" as const)
    })
    return poll.pipe(
      Effect.retry({ schedule, while: (e) => e === "pending" }),
      Effect.mapError((e) => (e === "pending" ? gaveUp() : e)),
      Effect.timeoutOrElse({ duration: options.timeout ?? Duration.seconds(60), orElse: () => Effect.fail(gaveUp()) }),
      Effect.withSpan("Constraints.awaitOperational", { attributes: { "db.namespace": name } })
    )
  }

  return {
    create,
    drop: (spec) =>
      send("DROP", spec).pipe(
        Effect.flatMap((text) =>
          text === "OK"
            ? Effect.void
            : Effect.fail(malformed(`GRAPH.CONSTRAINT DROP replied ${text}`, name, "GRAPH.CONSTRAINT"))
        ),
        Effect.withSpan("Constraints.drop", { attributes: { "db.namespace": name } })
      ),
    list,
    awaitOperational
  }
}
