/**
 * Rows streamed off the wire, through real loopback sockets to a scripted FalkorDB-like
 * peer: row 0 is handed out before the peer sends the rest of the reply; `Stream.take`
 * leaves the connection in step; a row naming an unknown label triggers a schema refresh
 * that is queued behind the streamed reply on the same connection, and nothing deadlocks.
 * Proofs are by ordering and counters, never by time.
 */
import { Decoder } from "@effect-falkordb/resp/Decoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Net from "node:net"
import * as FalkorDB from "../src/FalkorDB.ts"
import type { Node } from "../src/Value.ts"
import type { GraphSchema } from "../src/internal/SchemaCache.ts"
import { serverMessageOf } from "./helpers.ts"

const text = (reply: unknown): string => new TextDecoder().decode(reply as Uint8Array)

const stats = "*2\r\n$19\r\nCached execution: 0\r\n$52\r\nQuery internal execution time: 0.067516 milliseconds\r\n"
/** Row `i`: `[n: node(id i, label 0, {0: i}), x: i]`. */
const row = (i: number): string =>
  `*2\r\n*2\r\n:8\r\n*3\r\n:${i}\r\n*1\r\n:0\r\n*1\r\n*3\r\n:0\r\n:3\r\n:${i}\r\n*2\r\n:3\r\n:${i}\r\n`
const head = (rows: number) => `*3\r\n*2\r\n*2\r\n:1\r\n$1\r\nn\r\n*2\r\n:1\r\n$1\r\nx\r\n*${rows}\r\n`
/** A verbose one-column procedure reply of `names`. */
const names = (...list: ReadonlyArray<string>) =>
  `*3\r\n*1\r\n$4\r\nname\r\n*${list.length}\r\n${list.map((n) => `*1\r\n$${n.length}\r\n${n}\r\n`).join("")}${stats}`

interface Peer {
  readonly url: string
  /** Commands received, in order (name and first two arguments). */
  readonly received: Array<string>
  /** Rows of the big reply the peer has handed to its socket. */
  rowsWritten: number
  /** Releases every gated reply. */
  readonly open: () => void
}

/**
 * In order per connection: `PING`; the schema procedures (label `Person`, property `age`);
 * a query `GATED n`: the header and row 0, then the rest once a `CALL db.labels()` has been
 * received on any connection (or at once when `open` is given in the query text);
 * `BIG n`: the whole reply with the socket's backpressure.
 */
const peer = Effect.acquireRelease(
  Effect.callback<{ peer: Peer; server: Net.Server; sockets: Set<Net.Socket> }>((resume) => {
    const sockets = new Set<Net.Socket>()
    let openGate: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      openGate = resolve
    })
    const state: Peer = { url: "", received: [], rowsWritten: 0, open: () => openGate() }
    const server = Net.createServer((socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
      socket.on("error", () => socket.destroy())
      let chain = Promise.resolve()
      const send = (bytes: string) =>
        new Promise<void>((done) => {
          if (socket.destroyed || socket.write(bytes)) done()
          else socket.once("drain", () => done())
        })
      const decoder = new Decoder((request) => {
        const command = (request as Array<Reply>).map(text)
        const name = command[0]!.toUpperCase()
        state.received.push(command.slice(0, 3).join(" "))
        const query = command[2] ?? ""
        // Received now, answered in order after what this connection owes.
        if (query.startsWith("CALL db.labels()")) openGate()
        chain = chain.then(async () => {
          if (name === "PING") return send("+PONG\r\n")
          if (query.startsWith("CALL db.labels()")) return send(names("Person"))
          if (query.startsWith("CALL db.propertyKeys()")) return send(names("age"))
          const match = /^(GATED|BIG|TRAILING) (\d+)/.exec(query)
          if (match === null) return send(`-ERR unscripted ${command.join(" ")}\r\n`)
          const rows = Number(match[2])
          // The legacy shape: an error where the statistics belong, after the rows.
          if (match[1] === "TRAILING") {
            let all = head(rows)
            for (let i = 0; i < rows; i++) all += row(i)
            return send(`${all}-Division by zero\r\n`)
          }
          if (match[1] === "GATED") {
            await send(head(rows) + row(0))
            if (!query.includes("open")) await gate
            let rest = ""
            for (let i = 1; i < rows; i++) rest += row(i)
            return send(rest + stats)
          }
          await send(head(rows))
          let batch = ""
          for (let i = 0; i < rows; i++) {
            batch += row(i)
            if (batch.length > 16384) {
              await send(batch)
              state.rowsWritten = i + 1
              if (socket.destroyed) return
              batch = ""
            }
          }
          await send(batch + stats)
          state.rowsWritten = rows
        })
      })
      socket.on("data", (chunk) => decoder.feed(chunk))
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as Net.AddressInfo).port
      ;(state as { url: string }).url = `redis://127.0.0.1:${port}`
      resume(Effect.succeed({ peer: state, server, sockets }))
    })
  }),
  ({ server, sockets }) =>
    Effect.callback<void>((resume) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resume(Effect.void))
    })
).pipe(Effect.map(({ peer }) => peer))

const client = (url: string, options: FalkorDB.Options) =>
  Effect.flatMap(Layer.build(FalkorDB.layer({ url, ...options })), (context) =>
    Effect.succeed(context.mapUnsafe.get(FalkorDB.FalkorDB.key) as FalkorDB.FalkorDB["Service"])
  )

/** Graph `g` with the peer's names already in the schema cache (no lookup will be sent). */
const seeded = (db: FalkorDB.FalkorDB["Service"]) => {
  const g = db.graph("g")
  const cache = g.schema as unknown as GraphSchema
  cache.replaceAll("labels", ["Person"])
  cache.replaceAll("propertyKeys", ["age"])
  return g
}

/**
 * Gated: the peer holds the rest of the reply until the labels lookup reaches it. Every
 * strategy sends that lookup while the reply is unfinished: on another connection, or (one
 * shared socket, a pool of one) on a connection of its own for the lookup.
 */
const strategies: ReadonlyArray<readonly [string, FalkorDB.Options]> = [
  ["single", { strategy: "single" }],
  ["pooled (size 2)", { strategy: "pooled", size: 2 }],
  ["pooled (size 1)", { strategy: "pooled", size: 1 }],
  ["multiplexed (1 connection)", { strategy: "multiplexed", connections: 1 }]
]

describe("Graph.roStream streams rows off the wire", () => {
  for (const [label, options] of strategies) {
    it.live(
      `${label}: an unknown label mid-stream is looked up behind the streamed reply without deadlock; rows stay in order`,
      () =>
        Effect.scoped(
          Effect.gen(function* () {
            const server = yield* peer
            const db = yield* client(server.url, options)
            const g = db.graph("g")
            // Row 0 names label 0 and property 0, unknown to the fresh cache: a refresh starts
            // while the peer still holds the rest of the reply until it receives that refresh.
            const rows = yield* Stream.runCollect(g.roStream("GATED 300"))
            assert.strictEqual(rows.length, 300)
            rows.forEach((r, i) => {
              assert.strictEqual(r.get("x"), i)
              const n = r.get("n") as Node
              assert.deepStrictEqual(n.labels, ["Person"])
              assert.deepStrictEqual(n.properties, { age: i })
            })
            // The refresh went out while the streamed reply was unfinished (the peer held it).
            const gatedAt = server.received.findIndex((c) => c.includes("GATED"))
            const labelsAt = server.received.findIndex((c) => c.includes("db.labels"))
            assert.isAbove(labelsAt, gatedAt)
            assert.strictEqual(g.schema.refreshes.labels, 1)
            // The connection is in step.
            const again = yield* Stream.runCollect(g.roStream("GATED 3 open"))
            assert.deepStrictEqual(
              again.map((r) => r.get("x")),
              [0, 1, 2]
            )
          })
        )
    )

    it.live(
      `${label}: an error in place of the statistics fails roQuery and roStream with it; the connection stays in step`,
      () =>
        Effect.scoped(
          Effect.gen(function* () {
            const server = yield* peer
            const db = yield* client(server.url, options)
            const g = seeded(db)
            for (const rows of [0, 3]) {
              const queried = yield* Effect.flip(g.roQuery(`TRAILING ${rows}`))
              assert.strictEqual(serverMessageOf(queried), "Division by zero", `roQuery, ${rows} rows`)
              const streamed = yield* Effect.flip(Stream.runCollect(g.roStream(`TRAILING ${rows}`)))
              assert.strictEqual(serverMessageOf(streamed), "Division by zero", `roStream, ${rows} rows`)
            }
            const after = yield* g.roQuery("GATED 2 open")
            assert.deepStrictEqual(
              after.rows.map((r) => r.get("x")),
              [0, 1]
            )
          })
        )
    )

    it.live(`${label}: row 0 is handed out before the rest of the reply is sent`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* peer
          const db = yield* client(server.url, options)
          // Names known first, so no refresh can open the peer's gate.
          const g = seeded(db)
          const first = yield* g.roStream("GATED 50").pipe(Stream.take(1), Stream.runCollect)
          // The peer still holds rows 1..49 (its gate opens only on a labels lookup).
          assert.deepStrictEqual(
            first.map((r) => r.get("x")),
            [0]
          )
          assert.isFalse(server.received.some((c) => c.includes("db.labels")))
          server.open()
        })
      )
    )

    it.live(`${label}: Stream.take(10) of a huge result neither keeps it nor desynchronises the connection`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* peer
          const db = yield* client(server.url, options)
          const g = seeded(db)
          const ten = yield* g.roStream("BIG 200000").pipe(Stream.take(10), Stream.runCollect)
          assert.deepStrictEqual(
            ten.map((r) => r.get("x")),
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
          )
          const next = yield* g.roQuery("GATED 2 open")
          assert.deepStrictEqual(
            next.rows.map((r) => r.get("x")),
            [0, 1]
          )
          // The rest was read and discarded (with two pooled connections the query above may
          // have used the other one: wait for the peer to finish writing, bounded).
          for (let i = 0; i < 2000 && server.rowsWritten < 200000; i++) yield* Effect.sleep("5 millis")
          assert.strictEqual(server.rowsWritten, 200000)
        })
      )
    )
  }
})
