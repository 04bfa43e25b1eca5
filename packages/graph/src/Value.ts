/**
 * The values a FalkorDB query returns, as real types: `Node`, `Edge`, `Path`, `Point`,
 * vectors as `Float32Array`, maps as plain objects, temporal values from `Temporal`, and
 * the scalars as JavaScript values (integers are `number` when safe, `bigint` otherwise).
 * Each has a `Schema` so typed rows can be decoded with `effect/Schema`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as Temporal from "./Temporal.ts"

/**
 * A map value or an entity's properties: keys in the order the server sent them.
 *
 * @since 0.1.0
 * @category models
 */
export interface FalkorMap {
  readonly [key: string]: FalkorValue
}

/**
 * Any value a query can return.
 *
 * @since 0.1.0
 * @category models
 */
export type FalkorValue =
  | null
  | string
  | number
  | bigint
  | boolean
  | ReadonlyArray<FalkorValue>
  | FalkorMap
  | Node
  | Edge
  | Path
  | Point
  | Float32Array
  | Temporal.Temporal

/**
 * The value type codes of FalkorDB's compact replies (`[code, payload]` cells), named once
 * for the decoder and for encoders of test replies.
 *
 * @since 0.1.0
 * @category models
 */
export const TypeCode = {
  Null: 1,
  String: 2,
  Integer: 3,
  Boolean: 4,
  Double: 5,
  Array: 6,
  Edge: 7,
  Node: 8,
  Path: 9,
  Map: 10,
  Point: 11,
  Vector: 12,
  DateTime: 13,
  Date: 14,
  Time: 15,
  Duration: 16
} as const

/**
 * A node: its id, its labels (in label-id order, as the server sends them) and its
 * properties (in insertion order).
 *
 * @example
 * ```ts
 * import { Node } from "@effect-falkordb/graph/Value"
 *
 * const node = new Node(0, ["Movie"], { title: "Alien", year: 1979 })
 * node.labels // ["Movie"]
 * node.properties.title // "Alien"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class Node {
  readonly _tag = "Node"
  readonly id: number | bigint
  readonly labels: ReadonlyArray<string>
  readonly properties: FalkorMap
  constructor(id: number | bigint, labels: ReadonlyArray<string>, properties: FalkorMap) {
    this.id = id
    this.labels = labels
    this.properties = properties
  }
}

/**
 * A relationship: id, type, the ids of its stored source and destination (not of the
 * traversal direction), and its properties.
 *
 * @since 0.1.0
 * @category models
 */
export class Edge {
  readonly _tag = "Edge"
  readonly id: number | bigint
  readonly relationshipType: string
  readonly sourceId: number | bigint
  readonly destinationId: number | bigint
  readonly properties: FalkorMap
  constructor(
    id: number | bigint,
    relationshipType: string,
    sourceId: number | bigint,
    destinationId: number | bigint,
    properties: FalkorMap
  ) {
    this.id = id
    this.relationshipType = relationshipType
    this.sourceId = sourceId
    this.destinationId = destinationId
    this.properties = properties
  }
}

/**
 * A path: nodes in traversal order and the edges between them (`edges.length ===
 * nodes.length - 1` for a non-empty path).
 *
 * @since 0.1.0
 * @category models
 */
export class Path {
  readonly _tag = "Path"
  readonly nodes: ReadonlyArray<Node>
  readonly edges: ReadonlyArray<Edge>
  constructor(nodes: ReadonlyArray<Node>, edges: ReadonlyArray<Edge>) {
    this.nodes = nodes
    this.edges = edges
  }
  get length(): number {
    return this.edges.length
  }
}

/**
 * A geographic point. The server stores latitude and longitude as 32-bit floats and
 * prints them with 15 significant digits (`32.07` arrives as `32.0699996948242`); the
 * fields hold the exact float32 value (`Math.fround` of what was printed), and
 * `toString` rounds to the 7 significant digits a float32 carries.
 *
 * @since 0.1.0
 * @category models
 */
export class Point {
  readonly _tag = "Point"
  readonly latitude: number
  readonly longitude: number
  constructor(latitude: number, longitude: number) {
    this.latitude = Math.fround(latitude)
    this.longitude = Math.fround(longitude)
  }
  toString(): string {
    return `point({latitude: ${Number(this.latitude.toPrecision(7))}, longitude: ${Number(this.longitude.toPrecision(7))}})`
  }
}

/**
 * Builds a map value with keys in the given order. A key `__proto__` becomes an own
 * property, never the prototype.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMap = (entries: Iterable<readonly [string, FalkorValue]>): FalkorMap => {
  const out: Record<string, FalkorValue> = {}
  for (const [key, value] of entries) {
    if (key === "__proto__") {
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
    } else out[key] = value
  }
  return out
}

/**
 * @since 0.1.0
 * @category schemas
 */
export const NodeSchema = Schema.instanceOf(Node)
/**
 * @since 0.1.0
 * @category schemas
 */
export const EdgeSchema = Schema.instanceOf(Edge)
/**
 * @since 0.1.0
 * @category schemas
 */
export const PathSchema = Schema.instanceOf(Path)
/**
 * @since 0.1.0
 * @category schemas
 */
export const PointSchema = Schema.instanceOf(Point)
/**
 * @since 0.1.0
 * @category schemas
 */
export const VectorSchema = Schema.instanceOf(Float32Array)
/**
 * @since 0.1.0
 * @category schemas
 */
export const DateTimeSchema = Schema.instanceOf(Temporal.DateTime)
/**
 * @since 0.1.0
 * @category schemas
 */
export const DateSchema = Schema.instanceOf(Temporal.Date)
/**
 * @since 0.1.0
 * @category schemas
 */
export const TimeSchema = Schema.instanceOf(Temporal.Time)
/**
 * @since 0.1.0
 * @category schemas
 */
export const DurationSchema = Schema.instanceOf(Temporal.Duration)

/**
 * An integer column: `number` when safe, `bigint` otherwise.
 *
 * @since 0.1.0
 * @category schemas
 */
export const IntegerSchema = Schema.Union([Schema.Number, Schema.BigInt])

/**
 * Decodes a `Node` into its properties, decoded with `properties` (e.g. a
 * `Schema.Struct`): `roQueryAs(Schema.Struct({ m: Value.nodeProperties(Movie) }), …)`.
 *
 * @example
 * ```ts
 * import { cypher } from "@effect-falkordb/graph/Cypher"
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import { nodeProperties } from "@effect-falkordb/graph/Value"
 * import { Effect, Schema, Stream } from "effect"
 *
 * const Movie = Schema.Struct({ title: Schema.String, year: Schema.Number })
 *
 * // A column that holds a :Movie node, decoded into its properties.
 * const titles = Effect.gen(function* () {
 *   const graph = (yield* FalkorDB.FalkorDB).graph("movies")
 *   const rows = yield* graph
 *     .roQueryAs(Schema.Struct({ m: nodeProperties(Movie) }), cypher`MATCH (m:Movie) RETURN m`)
 *     .pipe(Stream.runCollect)
 *   return rows.map((row) => row.m.title)
 * })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const nodeProperties = <S extends Schema.Top>(properties: S) =>
  NodeSchema.pipe(
    Schema.decodeTo(properties, {
      decode: SchemaGetter.transform((node: Node) => node.properties as S["Encoded"]),
      encode: SchemaGetter.transform((value: S["Encoded"]) => new Node(-1, [], value as FalkorMap))
    })
  )

/**
 * Decodes an `Edge` into its properties, decoded with `properties`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const edgeProperties = <S extends Schema.Top>(properties: S) =>
  EdgeSchema.pipe(
    Schema.decodeTo(properties, {
      decode: SchemaGetter.transform((edge: Edge) => edge.properties as S["Encoded"]),
      encode: SchemaGetter.transform((value: S["Encoded"]) => new Edge(-1, "", -1, -1, value as FalkorMap))
    })
  )

/**
 * Decodes a `Node` into `{ id, labels, properties }` with its properties decoded by
 * `properties`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const nodeOf = <S extends Schema.Top>(properties: S) => {
  const target = Schema.Struct({ id: IntegerSchema, labels: Schema.Array(Schema.String), properties })
  return NodeSchema.pipe(
    Schema.decodeTo(target, {
      decode: SchemaGetter.transform(
        (node: Node) =>
          ({ id: node.id, labels: node.labels, properties: node.properties }) as (typeof target)["Encoded"]
      ),
      encode: SchemaGetter.transform((value: (typeof target)["Encoded"]) => {
        const v = value as unknown as { id: number | bigint; labels: ReadonlyArray<string>; properties: FalkorMap }
        return new Node(v.id, v.labels, v.properties)
      })
    })
  )
}
