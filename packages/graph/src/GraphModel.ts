/**
 * Repositories of nodes built from a model, like `effect/sql/SqlModel`: from an
 * `effect/schema` `Model` class (or a `Schema.Class`) and a label, `makeRepository` gives
 * `insert`, `insertVoid`, `update`, `updateVoid`, `findById` and `delete` (the names of
 * `SqlModel.makeRepository`), plus `relate` / `related` for relationships; `makeResolvers`
 * gives batched `insert`, `insertVoid`, `findById` and `delete` (`GraphResolver`).
 *
 * - A model is one node label; each field is one property, written as parameterised Cypher
 *   with the label and property names quoted (`Identifier`). The `idColumn` property
 *   identifies a node (FalkorDB generates no property values: the id must be in the insert
 *   variant, e.g. `Model.GeneratedByApp`). Give it a range index for fast lookups.
 * - Values round-trip through FalkorDB types: points (`Value.PointSchema`), vectors
 *   (`Value.VectorSchema`, stored as `vecf32`), temporal values (`Value.DateTimeSchema`, …,
 *   stored as `localdatetime`, `date`, …), bigints (stored as integers and read back as
 *   `bigint`), lists of primitives; an absent property reads back as `null` when the field
 *   admits `null`.
 * - A field FalkorDB cannot store (a nested struct, a list of structs, a JS `Date`, a
 *   function) fails `makeRepository` with reason `InvalidArgument` naming the field — before
 *   anything is sent. An id its schema refuses fails with `InvalidParameter` naming the
 *   request; a node that does not decode fails with `RowDecode` naming the property.
 *
 * @example
 * ```ts
 * import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
 * import * as GraphModel from "@effect-falkordb/graph/GraphModel"
 * import * as Temporal from "@effect-falkordb/graph/Temporal"
 * import * as Value from "@effect-falkordb/graph/Value"
 * import { Effect, Schema } from "effect"
 * import { Model } from "effect/schema"
 *
 * class User extends Model.Class<User>("User")({
 *   id: Model.GeneratedByApp(Schema.String),
 *   name: Schema.String,
 *   born: Value.DateSchema,
 *   embedding: Schema.NullOr(Value.VectorSchema)
 * }) {}
 *
 * const program = Effect.gen(function* () {
 *   const graph = (yield* FalkorDB.FalkorDB).graph("social")
 *   const users = yield* GraphModel.makeRepository(User, { graph, label: "User", idColumn: "id" })
 *   const ada = yield* users.insert({ id: "ada", name: "Ada", born: new Temporal.Date(-4850582400), embedding: null })
 *   yield* users.relate("ada", "KNOWS", "charles", { properties: { since: 1833 } })
 *   const known = yield* users.related("ada", "KNOWS") // Array<User>
 *   return { ada, known }
 * })
 * ```
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as RequestResolver from "effect/RequestResolver"
import * as Schema from "effect/Schema"
import type * as Cypher from "./Cypher.ts"
import { FalkorError, InvalidArgument, isFalkorError } from "./FalkorError.ts"
import type { Graph, Parameters, QueryResult } from "./Graph.ts"
import * as GraphResolver from "./GraphResolver.ts"
import * as GraphSchema from "./GraphSchema.ts"
import * as Identifier from "./Identifier.ts"
import { quoteOrThrow } from "./Identifier.ts"
import { type Field, fieldsOf } from "./internal/ModelFields.ts"
import { decoder, describe, encoder } from "./internal/Requests.ts"
import { Node } from "./Value.ts"

/**
 * A model: an `effect/schema` `Model` class (with its `insert` and `update` variants) or any
 * schema with `fields` (a `Schema.Class`, a `Schema.Struct`: inserts and updates take its fields).
 *
 * @since 0.1.0
 * @category models
 */
export type Any = Schema.Top & { readonly fields: Schema.Struct.Fields }

/**
 * The schema of an insert: the model's `insert` variant, or a struct of its fields.
 *
 * @since 0.1.0
 * @category models
 */
export type InsertOf<S extends Any> = S extends { readonly insert: infer I extends Schema.Top }
  ? I
  : Schema.Struct<S["fields"]>

/**
 * The schema of an update: the model's `update` variant, or a struct of its fields.
 *
 * @since 0.1.0
 * @category models
 */
export type UpdateOf<S extends Any> = S extends { readonly update: infer U extends Schema.Top }
  ? U
  : Schema.Struct<S["fields"]>

/**
 * The queries a repository needs of a graph.
 *
 * @since 0.1.0
 * @category models
 */
export type Queries = Pick<Graph, "query" | "roQuery">

/**
 * The options of {@link makeRepository} and {@link makeResolvers}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<Id> {
  readonly graph: Queries
  /** The node label of the model. */
  readonly label: string
  /** The field (and property) that identifies a node. */
  readonly idColumn: Id
  /** Span names are `<spanPrefix>.insert`, …; default `<label>Repository`. */
  readonly spanPrefix?: string | undefined
}

/**
 * Where a relationship ends: a repository (its label, id property and model).
 *
 * @since 0.1.0
 * @category models
 */
export interface Target<A, IdType, R = never> {
  readonly label: string
  readonly idColumn: string
  /** Decodes a node of the target's label into its model. */
  readonly decodeNode: (node: unknown) => Effect.Effect<A, FalkorError, R>
  /** Encodes an id of the target into its parameter. */
  readonly encodeId: (id: IdType) => Effect.Effect<unknown, FalkorError, R>
}

/**
 * The direction of `related`: relationships going out of the node (default), coming in, or
 * either.
 *
 * @since 0.1.0
 * @category models
 */
export type Direction = "out" | "in" | "both"

/**
 * A repository of one label.
 *
 * @since 0.1.0
 * @category models
 */
export interface Repository<S extends Any, Id extends keyof S["Type"] & keyof S["fields"]>
  extends Target<S["Type"], S["fields"][Id]["Type"], S["DecodingServices"] | S["fields"][Id]["EncodingServices"]> {
  /** Creates a node; the node as stored, decoded. */
  readonly insert: (
    insert: InsertOf<S>["Type"]
  ) => Effect.Effect<S["Type"], FalkorError, S["DecodingServices"] | InsertOf<S>["EncodingServices"]>
  readonly insertVoid: (
    insert: InsertOf<S>["Type"]
  ) => Effect.Effect<void, FalkorError, InsertOf<S>["EncodingServices"]>
  /** Sets every field of the node with the update's id (a field left out is removed); `NoSuchElementError` without one. */
  readonly update: (
    update: UpdateOf<S>["Type"]
  ) => Effect.Effect<
    S["Type"],
    FalkorError | Cause.NoSuchElementError,
    S["DecodingServices"] | UpdateOf<S>["EncodingServices"]
  >
  readonly updateVoid: (
    update: UpdateOf<S>["Type"]
  ) => Effect.Effect<void, FalkorError, UpdateOf<S>["EncodingServices"]>
  readonly findById: (
    id: S["fields"][Id]["Type"]
  ) => Effect.Effect<
    S["Type"],
    FalkorError | Cause.NoSuchElementError,
    S["DecodingServices"] | S["fields"][Id]["EncodingServices"]
  >
  /** Deletes the node and its relationships (`DETACH DELETE`); nothing when there is none. */
  readonly delete: (
    id: S["fields"][Id]["Type"]
  ) => Effect.Effect<void, FalkorError, S["fields"][Id]["EncodingServices"]>
  /**
   * Creates `(from)-[:type properties]->(to)`, `to` being a node of this label or of
   * `options.target`'s; `NoSuchElementError` when either node is missing.
   */
  readonly relate: <TId = S["fields"][Id]["Type"], TR = never>(
    from: S["fields"][Id]["Type"],
    type: string,
    to: TId,
    options?: {
      readonly properties?: { readonly [name: string]: Cypher.ParameterValue } | undefined
      readonly target?: Target<unknown, TId, TR> | undefined
    }
  ) => Effect.Effect<void, FalkorError | Cause.NoSuchElementError, S["fields"][Id]["EncodingServices"] | TR>
  /** The nodes `from` is related to by `type` (of this label, or of `options.target`'s), decoded. */
  readonly related: <A = S["Type"], TR = S["DecodingServices"]>(
    from: S["fields"][Id]["Type"],
    type: string,
    options?: {
      readonly direction?: Direction | undefined
      readonly target?: Target<A, any, TR> | undefined
    }
  ) => Effect.Effect<Array<A>, FalkorError, S["fields"][Id]["EncodingServices"] | TR>
}

/** Everything both constructors derive from a model: the checked fields and the query texts. */
const prepare = <S extends Any>(Model: S, options: Options<PropertyKey>) =>
  Effect.try({
    try: () => {
      const idColumn = String(options.idColumn)
      const spanPrefix = options.spanPrefix ?? `${options.label}Repository`
      const label = quoteOrThrow(options.label, "label")
      const modelName = (Model.ast.annotations?.identifier as string | undefined) ?? options.label
      const check = (schema: Schema.Top, variant: string): ReadonlyArray<Field> => {
        const fields = fieldsOf(schema.ast)
        if (!Array.isArray(fields)) {
          const refused = fields as { readonly field: string | undefined; readonly detail: string }
          throw invalidModel(
            `${modelName}${variant}${refused.field === undefined ? "" : `.${refused.field}`}`,
            refused.detail
          )
        }
        for (const field of fields) quoteOrThrow(field.name, "property name")
        return fields
      }
      const fields = check(Model, "")
      const insertFields = check(insertSchema(Model), ".insert")
      const updateFields = check(updateSchema(Model), ".update")
      const idField = fields.find((field) => field.name === idColumn)
      const insertId = insertFields.find((field) => field.name === idColumn)
      if (idField === undefined) throw invalidModel("idColumn", `${modelName} has no field ${JSON.stringify(idColumn)}`)
      if (insertId === undefined || updateFields.every((field) => field.name !== idColumn)) {
        throw invalidModel(
          "idColumn",
          `${modelName}.${insertId === undefined ? "insert" : "update"} has no field ${JSON.stringify(idColumn)}: FalkorDB generates no property values, so the id must be inserted and identifies updates (Model.GeneratedByApp, not GeneratedByDb)`
        )
      }
      if (idField.rebuild !== undefined || idField.nullable || idField.optional) {
        throw invalidModel("idColumn", `${modelName}.${idColumn} must be a required string or number, never null`)
      }
      const id = quoteOrThrow(idColumn, "property name")
      const sets = (list: ReadonlyArray<Field>) => {
        const assignments = list
          .filter((field) => field.name !== idColumn)
          .map((field) => {
            const key = quoteOrThrow(field.name, "property name")
            return `n.${key} = ${field.rebuild === undefined ? `r.${key}` : `${field.rebuild}(r.${key})`}`
          })
        return assignments.length === 0 ? "" : ` SET ${assignments.join(", ")}`
      }
      return {
        idColumn,
        label: options.label,
        spanPrefix,
        fields,
        quotedLabel: label,
        quotedId: id,
        insert: `UNWIND $requests AS r CREATE (n:${label} {${id}: r.${id}})${sets(insertFields)} RETURN n`,
        insertVoid: `UNWIND $requests AS r CREATE (n:${label} {${id}: r.${id}})${sets(insertFields)}`,
        update: `UNWIND $requests AS r MATCH (n:${label} {${id}: r.${id}})${sets(updateFields)} RETURN n`,
        updateVoid: `UNWIND $requests AS r MATCH (n:${label} {${id}: r.${id}})${sets(updateFields)}`,
        findById: `MATCH (n:${label} {${id}: $id}) RETURN n`,
        findByIds: `UNWIND $requests AS r MATCH (n:${label} {${id}: r}) RETURN n`,
        delete: `MATCH (n:${label} {${id}: $id}) DETACH DELETE n`,
        deleteMany: `UNWIND $requests AS r MATCH (n:${label} {${id}: r}) DETACH DELETE n`
      }
    },
    // What the builder throws is a FalkorError (a refused name or field); anything else is a bug.
    catch: (error) =>
      isFalkorError(error) ? error : invalidModel("model", `cannot build the queries: ${String(error)}`)
  })

const insertSchema = <S extends Any>(Model: S): InsertOf<S> =>
  ("insert" in Model && Schema.isSchema(Model.insert) ? Model.insert : Schema.Struct(Model.fields)) as InsertOf<S>

const updateSchema = <S extends Any>(Model: S): UpdateOf<S> =>
  ("update" in Model && Schema.isSchema(Model.update) ? Model.update : Schema.Struct(Model.fields)) as UpdateOf<S>

const invalidModel = (argument: string, detail: string) =>
  new FalkorError({
    reason: new InvalidArgument({ argument, detail, serverMessage: undefined, command: "GraphModel.makeRepository" })
  })

/** A node's properties as the model's encoded form: absent nullable fields null, safe integers of bigint fields bigints. */
const encodedOf =
  (fields: ReadonlyArray<Field>) =>
  (value: unknown): unknown => {
    if (!(value instanceof Node)) return value
    const properties = value.properties
    const out: Record<string, unknown> = {}
    for (const field of fields) {
      const property = properties[field.name]
      if (property === undefined) {
        if (field.nullable) out[field.name] = null
      } else out[field.name] = field.bigint && typeof property === "number" ? BigInt(property) : property
    }
    return out
  }

/** Runs `text` and answers the first column of each row as the model's encoded form. */
const nodes =
  (run: Queries["query"], text: string, toEncoded: (value: unknown) => unknown) =>
  (parameters: Parameters): Effect.Effect<ReadonlyArray<unknown>, FalkorError> =>
    Effect.map(run(text, parameters), (result: QueryResult) => result.rows.map((row) => toEncoded(row.getAt(0))))

/**
 * A repository of the nodes of `options.label`, as `SqlModel.makeRepository` for a table.
 * Fails with `InvalidArgument` when the model has a field FalkorDB cannot store, when a name
 * cannot be an identifier, or when `idColumn` is unusable — before anything is sent.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeRepository = <S extends Any, Id extends keyof S["Type"] & keyof S["fields"] & string>(
  Model: S,
  options: Options<Id>
): Effect.Effect<Repository<S, Id>, FalkorError> =>
  Effect.map(prepare(Model, options), (plan) => {
    const graph = options.graph
    const Insert = insertSchema(Model)
    const Update = updateSchema(Model)
    const idSchema = Model.fields[options.idColumn] as Schema.Top
    const toEncoded = encodedOf(plan.fields)
    const name = (operation: string) => `${plan.spanPrefix}.${operation}`
    const span = (operation: string, attributes?: Record<string, unknown>) =>
      Effect.withSpan(name(operation), { attributes: { "db.system.name": "falkordb", ...attributes } })
    const write = (text: string) => nodes(graph.query, text, toEncoded)
    const read = (text: string) => nodes(graph.roQuery, text, toEncoded)

    // One node written from one request, returned decoded; or written for its effect.
    const writeOne = <Req extends Schema.Top>(operation: string, Request: Req, text: string) =>
      GraphSchema.findOne({
        name: name(operation),
        Request,
        Result: Model,
        execute: (request) => write(text)({ requests: [request as Cypher.ParameterValue] })
      })
    const writeVoid = <Req extends Schema.Top>(operation: string, Request: Req, text: string) =>
      GraphSchema.void({
        name: name(operation),
        Request,
        execute: (request) => graph.query(text, { requests: [request as Cypher.ParameterValue] })
      })
    const insertOne = writeOne("insert", Insert, plan.insert)
    const insertVoid = writeVoid("insertVoid", Insert, plan.insertVoid)
    const updateOne = writeOne("update", Update, plan.update)
    const updateVoid = writeVoid("updateVoid", Update, plan.updateVoid)
    const findOne = GraphSchema.findOne({
      name: name("findById"),
      Request: idSchema,
      Result: Model,
      execute: (id) => read(plan.findById)({ id: id as Cypher.ParameterValue })
    })
    const deleteOne = GraphSchema.void({
      name: name("delete"),
      Request: idSchema,
      execute: (id) => graph.query(plan.delete, { id: id as Cypher.ParameterValue })
    })
    const encodeId = encoder(idSchema, name("id"), false)
    const decode = decoder(Model)
    const decodeNode = (node: unknown) => decode(toEncoded(node), 0, name("related"))

    const notFound = (operation: string, payload: unknown) =>
      new Cause.NoSuchElementError(
        `${describe(name(operation), payload)}: no ${plan.label} node has this ${plan.idColumn}`
      )

    const repository: Repository<S, Id> = {
      label: plan.label,
      idColumn: plan.idColumn,
      decodeNode,
      encodeId,
      insert: (insert) =>
        insertOne(insert).pipe(Effect.catchTag("NoSuchElementError", Effect.die), span("insert")) as any,
      insertVoid: (insert) => insertVoid(insert).pipe(span("insertVoid")) as any,
      update: (update) =>
        updateOne(update).pipe(
          Effect.catchTag("NoSuchElementError", () =>
            Effect.fail(notFound("update", (update as Record<string, unknown>)[plan.idColumn]))
          ),
          span("update", { id: (update as Record<string, unknown>)[plan.idColumn] })
        ) as any,
      updateVoid: (update) =>
        updateVoid(update).pipe(span("updateVoid", { id: (update as Record<string, unknown>)[plan.idColumn] })) as any,
      findById: (id) =>
        findOne(id).pipe(
          Effect.catchTag("NoSuchElementError", () => Effect.fail(notFound("findById", id))),
          span("findById", { id })
        ) as any,
      delete: (id) => deleteOne(id).pipe(span("delete", { id })) as any,
      relate: (from, type, to, relateOptions) =>
        Effect.gen(function* () {
          const target = relateOptions?.target ?? (repository as unknown as Target<unknown, unknown, never>)
          const relationship = yield* Identifier.quote(type, "relationship type")
          const targetLabel = yield* Identifier.quote(target.label, "label")
          const targetId = yield* Identifier.quote(target.idColumn, "property name")
          const fromId = yield* repository.encodeId(from)
          const toId = yield* target.encodeId(to)
          const result = yield* graph.query(
            `MATCH (a:${plan.quotedLabel} {${plan.quotedId}: $from}), (b:${targetLabel} {${targetId}: $to}) CREATE (a)-[e:${relationship}]->(b) SET e += $properties RETURN count(e) AS created`,
            {
              from: fromId as Cypher.ParameterValue,
              to: toId as Cypher.ParameterValue,
              properties: relateOptions?.properties ?? {}
            }
          )
          if (result.rows[0]?.get("created") === 0) {
            return yield* Effect.fail(
              new Cause.NoSuchElementError(
                `${describe(name("relate"), [from, type, to])}: no ${plan.label} node ${JSON.stringify(String(from))} or no ${target.label} node ${JSON.stringify(String(to))}`
              )
            )
          }
        }).pipe(span("relate", { type })) as any,
      related: (from, type, relatedOptions) =>
        Effect.gen(function* () {
          const target = relatedOptions?.target ?? (repository as unknown as Target<unknown, unknown, never>)
          const relationship = yield* Identifier.quote(type, "relationship type")
          const targetLabel = yield* Identifier.quote(target.label, "label")
          const fromId = yield* repository.encodeId(from)
          const direction = relatedOptions?.direction ?? "out"
          const pattern =
            direction === "out"
              ? `-[:${relationship}]->`
              : direction === "in"
                ? `<-[:${relationship}]-`
                : `-[:${relationship}]-`
          const result = yield* graph.roQuery(
            `MATCH (a:${plan.quotedLabel} {${plan.quotedId}: $from})${pattern}(n:${targetLabel}) RETURN DISTINCT n`,
            { from: fromId as Cypher.ParameterValue }
          )
          return yield* Effect.forEach(result.rows, (row) => target.decodeNode(row.getAt(0)))
        }).pipe(span("related", { type })) as any
    }
    return repository
  })

/**
 * Batched `insert`, `insertVoid`, `findById` and `delete` for the nodes of `options.label`
 * (`GraphResolver`): the calls of many fibers in one tick become one `UNWIND` query. Fails
 * like {@link makeRepository} for a model it cannot store.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeResolvers = <S extends Any, Id extends keyof S["Type"] & keyof S["fields"] & string>(
  Model: S,
  options: Options<Id> & { readonly maxBatchSize?: number | undefined }
): Effect.Effect<
  {
    readonly insert: RequestResolver.RequestResolver<
      GraphResolver.GraphRequest<
        InsertOf<S>["Type"],
        S["Type"],
        never,
        S["DecodingServices"] | InsertOf<S>["EncodingServices"]
      >
    >
    readonly insertVoid: RequestResolver.RequestResolver<
      GraphResolver.GraphRequest<InsertOf<S>["Type"], void, never, InsertOf<S>["EncodingServices"]>
    >
    readonly findById: RequestResolver.RequestResolver<
      GraphResolver.GraphRequest<
        S["fields"][Id]["Type"],
        S["Type"],
        Cause.NoSuchElementError,
        S["DecodingServices"] | S["fields"][Id]["EncodingServices"] | S["fields"][Id]["DecodingServices"]
      >
    >
    readonly delete: RequestResolver.RequestResolver<
      GraphResolver.GraphRequest<S["fields"][Id]["Type"], void, never, S["fields"][Id]["EncodingServices"]>
    >
  },
  FalkorError
> =>
  Effect.map(prepare(Model, options), (plan) => {
    const graph = options.graph
    const idSchema = Model.fields[options.idColumn] as Schema.Top
    const toEncoded = encodedOf(plan.fields)
    const batch = { maxBatchSize: options.maxBatchSize }
    const requests = (encoded: ReadonlyArray<unknown>) => ({
      requests: encoded as ReadonlyArray<Cypher.ParameterValue>
    })
    const insert = GraphResolver.ordered({
      ...batch,
      name: `${plan.spanPrefix}.insert`,
      Request: insertSchema(Model),
      Result: Model,
      execute: (encoded) => nodes(graph.query, plan.insert, toEncoded)(requests(encoded))
    }).pipe(RequestResolver.withSpan(`${plan.spanPrefix}.insertResolver`))
    const insertVoid = GraphResolver.void({
      ...batch,
      name: `${plan.spanPrefix}.insertVoid`,
      Request: insertSchema(Model),
      execute: (encoded) => graph.query(plan.insertVoid, requests(encoded))
    }).pipe(RequestResolver.withSpan(`${plan.spanPrefix}.insertVoidResolver`))
    const findById = GraphResolver.findById({
      ...batch,
      name: `${plan.spanPrefix}.findById`,
      Id: idSchema,
      Result: Model,
      ResultId: (result) => (result as Record<string, unknown>)[plan.idColumn],
      RowId: (row) => (row as Record<string, unknown>)[plan.idColumn],
      execute: (ids) => nodes(graph.roQuery, plan.findByIds, toEncoded)(requests(ids))
    }).pipe(RequestResolver.withSpan(`${plan.spanPrefix}.findByIdResolver`))
    const delete_ = GraphResolver.void({
      ...batch,
      name: `${plan.spanPrefix}.delete`,
      Request: idSchema,
      execute: (ids) => graph.query(plan.deleteMany, requests(ids))
    }).pipe(RequestResolver.withSpan(`${plan.spanPrefix}.deleteResolver`))
    return { insert, insertVoid, findById, delete: delete_ } as any
  })
