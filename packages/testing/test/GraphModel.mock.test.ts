// A GraphModel repository and its resolvers on FalkorDBMock: the mock keeps nodes in a Map and
// answers the repository's UNWIND queries from their `requests` parameter, as a user would script
// it to test a repository without a server.
import * as FalkorDBMock from "@effect-falkordb/testing/FalkorDBMock"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Model } from "effect/schema"
import { FalkorDB } from "@effect-falkordb/graph/FalkorDB"
import type { FalkorError } from "@effect-falkordb/graph/FalkorError"
import * as GraphModel from "@effect-falkordb/graph/GraphModel"
import * as GraphResolver from "@effect-falkordb/graph/GraphResolver"
import { Node } from "@effect-falkordb/graph/Value"

class Book extends Model.Class<Book>("Book")({
  isbn: Model.GeneratedByApp(Schema.String),
  title: Schema.String,
  copies: Schema.BigInt
}) {}

type Stored = { readonly isbn: string; readonly title: string; readonly copies: number }

const mockLayer = () => {
  const books = new Map<string, Stored>()
  const node = (book: Stored) => ({ n: new Node(0, ["Book"], book) })
  const requests = (call: FalkorDBMock.Call) => call.parameters.requests as ReadonlyArray<never>
  return FalkorDBMock.layer([
    {
      query: "UNWIND $requests AS r CREATE (n:Book {isbn: r.isbn}) SET n.title = r.title, n.copies = r.copies RETURN n",
      respond: (call) => ({
        columns: ["n"],
        rows: requests(call).map((book: Stored) => {
          books.set(book.isbn, book)
          return node(book)
        })
      })
    },
    {
      query: "UNWIND $requests AS r MATCH (n:Book {isbn: r}) RETURN n",
      respond: (call) => ({
        columns: ["n"],
        rows: requests(call).flatMap((isbn: string) => (books.has(isbn) ? [node(books.get(isbn)!)] : []))
      })
    },
    {
      query: "MATCH (n:Book {isbn: $id}) RETURN n",
      respond: (call) => {
        const book = books.get(call.parameters.id as string)
        return { columns: ["n"], rows: book === undefined ? [] : [node(book)] }
      }
    }
  ])
}

describe("GraphModel on FalkorDBMock", () => {
  it.effect("batched inserts are one query; findById decodes the stored node; a missing id fails alone", () =>
    Effect.gen(function* () {
      const graph = (yield* FalkorDB).graph("library")
      const resolvers = yield* GraphModel.makeResolvers(Book, { graph, label: "Book", idColumn: "isbn" })
      const books = yield* GraphModel.makeRepository(Book, { graph, label: "Book", idColumn: "isbn" })
      const insert = GraphResolver.request(resolvers.insert)
      const isbns = Array.from({ length: 50 }, (_, i) => `isbn-${i}`)
      const inserted = yield* Effect.forEach(isbns, (isbn, i) => insert({ isbn, title: `T${i}`, copies: BigInt(i) }), {
        concurrency: "unbounded"
      })
      assert.deepStrictEqual(
        inserted.map((b) => b.copies),
        isbns.map((_, i) => BigInt(i))
      )
      const mock = yield* FalkorDBMock.FalkorDBMock
      assert.strictEqual((yield* mock.calls).length, 1)

      const found = yield* books.findById("isbn-7")
      assert.instanceOf(found, Book)
      assert.strictEqual(found.title, "T7")
      assert.strictEqual(found.copies, 7n)
      const [hit, miss] = yield* Effect.all(
        [
          GraphResolver.request("isbn-3", resolvers.findById),
          Effect.flip(GraphResolver.request("nope", resolvers.findById))
        ],
        { concurrency: "unbounded" }
      )
      assert.strictEqual(hit.title, "T3")
      assert.isTrue(Cause.isNoSuchElementError(miss))
      const wrong = (yield* Effect.flip(books.findById(3 as unknown as string))) as FalkorError
      assert.strictEqual(wrong.reason._tag, "InvalidParameter")
    }).pipe(Effect.provide(mockLayer()))
  )
})
