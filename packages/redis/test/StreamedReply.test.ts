/**
 * Streamed (`executeStreamed`) and folded (`executeFolded`) replies against a scripted peer on a
 * real loopback socket: parts arrive before the reply ends, stopping early keeps the
 * connection in step without keeping the rest, an exclusive connection pauses reading for a
 * lagging consumer, and a shared one fails the lagging stream (bounded) instead of stalling the
 * replies behind it. A fold gets its rows while the reply is read and equals the fold of the
 * whole reply; a fold that throws, a lost connection and a timeout fail only its command.
 * Bounds are checked by counters of buffered bytes, never by time or RSS.
 */
import { Decoder } from "@effect-falkordb/resp/Decoder"
import type { Reply } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"
import * as Net from "node:net"
import type { ReplyPart } from "../src/RedisConnection.ts"
import * as RedisConnection from "../src/RedisConnection.ts"
import { recent } from "../src/internal/ReplyStream.ts"
import { build, type Kind } from "./fixtures/Strategies.ts"
import { until } from "./fixtures/Until.ts"

const text = (reply: unknown): string => new TextDecoder().decode(reply as Uint8Array)

/** Row `i` of the test replies: `[i, "payload-<i>"]`. */
const row = (i: number): string => {
  const payload = `payload-${i}`
  return `*2\r\n:${i}\r\n$${payload.length}\r\n${payload}\r\n`
}
const head = (rows: number) => `*3\r\n*1\r\n$1\r\nh\r\n*${rows}\r\n`
const tail = "*1\r\n$5\r\nstats\r\n"
const wireSize = (rows: number): number => {
  let size = head(rows).length + tail.length
  for (let i = 0; i < rows; i++) size += row(i).length
  return size
}

interface Peer {
  readonly url: string
  /** Opens the gate of a `GATED` reply: the rest of it is sent. */
  readonly open: () => void
  gateOpened: boolean
  /** Bytes of `BIG` replies the peer has handed to its socket. */
  written: number
  /** The names of the commands the peer has read, in order. */
  readonly received: Array<string>
}

/**
 * A peer that answers, in order per connection: `PING` +PONG; `GET` $3 val; `BIG n` a
 * `[header, n rows, stats]` reply written with the socket's backpressure (so a client that
 * stops reading stops it); `GATED n` the header and row 0, then the rest only once `open`
 * is called.
 */
const peer = Effect.acquireRelease(
  Effect.callback<{ peer: Peer; server: Net.Server; sockets: Set<Net.Socket> }>((resume) => {
    const sockets = new Set<Net.Socket>()
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const state: Peer = {
      url: "",
      open: () => {
        state.gateOpened = true
        release()
      },
      gateOpened: false,
      written: 0,
      received: []
    }
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
      const big = async (rows: number) => {
        await send(head(rows))
        let batch = ""
        for (let i = 0; i < rows; i++) {
          batch += row(i)
          if (batch.length > 16384) {
            state.written += batch.length
            await send(batch)
            if (socket.destroyed) return
            batch = ""
          }
        }
        await send(batch + tail)
      }
      const decoder = new Decoder((request) => {
        const command = (request as Array<Reply>).map(text)
        const name = command[0]!.toUpperCase()
        state.received.push(name)
        chain = chain.then(async () => {
          if (name === "PING") return send("+PONG\r\n")
          if (name === "GET") return send("$3\r\nval\r\n")
          if (name === "BIG") return big(Number(command[1]))
          if (name === "HALF") {
            const rows = Number(command[1])
            let half = head(rows)
            for (let i = 0; i < rows / 2; i++) half += row(i)
            await send(half)
            socket.destroy()
            return
          }
          if (name === "LATE") {
            await gate
            return big(Number(command[1]))
          }
          if (name === "GATED") {
            const rows = Number(command[1])
            await send(head(rows) + row(0))
            await gate
            let rest = ""
            for (let i = 1; i < rows; i++) rest += row(i)
            return send(rest + tail)
          }
          return send(`-ERR unscripted ${name}\r\n`)
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

/** The rows of a list of parts (depth-2 values inside the reply's element 1), as their ids. */
const rowIds = (parts: ReadonlyArray<ReplyPart>): Array<number> => {
  const ids: Array<number> = []
  let element = -1
  for (const part of parts) {
    if (part.depth === 1 && part._tag !== "Close") element++
    if (part._tag === "Value" && part.depth === 2 && element === 1) ids.push((part.value as Array<number>)[0]!)
  }
  return ids
}

const kinds: ReadonlyArray<Kind> = ["single", "pooled1", "multiplexed2"]

describe("executeStreamed", () => {
  for (const kind of kinds) {
    it.live(`${kind}: row 0 is handed over before the rest of the reply is sent; order holds after it`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* peer
          const { service } = yield* build(kind, server.url)
          let firstRowBeforeGate: boolean | undefined
          const parts = yield* RedisConnection.executeStreamed(service, ["GATED", "500"]).pipe(
            Stream.tap((part) =>
              Effect.sync(() => {
                if (part._tag === "Value" && part.depth === 2 && firstRowBeforeGate === undefined) {
                  if (Array.isArray(part.value) && part.value.length === 2 && part.value[0] === 0) {
                    firstRowBeforeGate = !server.gateOpened
                    server.open()
                  }
                }
              })
            ),
            Stream.runCollect
          )
          assert.isTrue(firstRowBeforeGate, "row 0 arrived while the rest of the reply was held back by the peer")
          assert.deepStrictEqual(
            rowIds(parts),
            Array.from({ length: 500 }, (_, i) => i)
          )
          assert.deepStrictEqual(parts[0], { _tag: "Open", depth: 0, length: 3 })
          assert.deepStrictEqual(parts[parts.length - 1], { _tag: "Close", depth: 0 })
          assert.strictEqual(text(yield* service.execute(["GET", "k"])), "val")
        })
      )
    )

    it.live(`${kind}: Stream.take(10) of a large reply discards the rest as it arrives; the next reply is right`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* peer
          const { service } = yield* build(kind, server.url)
          const rows = 200_000
          const parts = yield* RedisConnection.executeStreamed(service, ["BIG", String(rows)], {
            highWaterMark: 16384
          }).pipe(
            Stream.filter((part) => part._tag === "Value" && part.depth === 2),
            Stream.drop(1),
            Stream.take(10),
            Stream.runCollect
          )
          assert.deepStrictEqual(
            parts.map((part) => (part._tag === "Value" ? (part.value as Array<number>)[0] : -1)),
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
          )
          const stream = recent[recent.length - 1]!
          // The connection stays in step: the next command's reply follows the discarded rest.
          assert.strictEqual(text(yield* service.execute(["GET", "k"])), "val")
          // (With two engines the GET may take the other one: wait for the rest to be read.)
          yield* until(
            Effect.sync(() => stream.ended),
            "the whole reply was read"
          )
          assert.strictEqual(stream.received, wireSize(rows) - 4)
          assert.strictEqual(stream.bufferedBytes, 0)
          assert.strictEqual(stream.buffered, 0)
          // Never more than the high-water mark and one socket read were held.
          assert.isBelow(stream.peakBuffered, 16384 + 2 * 65536)
        })
      )
    )
  }

  it.live("pooled: a lagging consumer pauses reading; the buffer stays bounded and every row arrives", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* peer
        const { service } = yield* build("pooled1", server.url)
        const rows = 600_000
        const total = wireSize(rows)
        const pull = yield* Stream.toPull(
          RedisConnection.executeStreamed(service, ["BIG", String(rows)], { highWaterMark: 16384 })
        )
        const first = yield* pull
        assert.deepStrictEqual(first[0], { _tag: "Open", depth: 0, length: 3 })
        const stream = recent[recent.length - 1]!
        // The consumer does not pull: wait until reading paused (bounded number of checks).
        yield* until(
          Effect.sync(() => stream.pausing),
          "reading paused"
        )
        const pausedAt = stream.received
        assert.isBelow(stream.bufferedBytes, 16384 + 2 * 65536)
        assert.isBelow(pausedAt, total)
        // Everything still arrives, in order, when the consumer catches up.
        let next = rowIds(first).length
        let outOfOrder = 0
        for (;;) {
          const exit = yield* Effect.exit(pull)
          if (Exit.isFailure(exit)) {
            assert.isTrue(Pull.isDoneCause(exit.cause), "ended, not failed")
            break
          }
          for (const part of exit.value) {
            if (part._tag === "Value" && part.depth === 2 && Array.isArray(part.value)) {
              if (part.value[0] !== next++) outOfOrder++
            }
          }
        }
        assert.strictEqual(outOfOrder, 0)
        assert.strictEqual(next, rows)
        assert.isBelow(stream.peakBuffered, 16384 + 2 * 65536)
        assert.strictEqual(stream.received, total - 4)
        assert.strictEqual(text(yield* service.execute(["GET", "k"])), "val")
      })
    )
  )

  it.live(
    "pooled: with every connection busy, a streamed or submitted command times out unsent (Timeout, written: false)",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* peer
          const { service } = yield* build("pooled1", server.url)
          // The pool's one connection is lent to a command the peer holds back.
          const busy = yield* Effect.forkChild(service.execute(["LATE", "10"], { timeout: "30 seconds" }))
          yield* until(
            Effect.sync(() => server.received.includes("LATE")),
            "the busy command reached the peer"
          )
          const error = yield* Effect.flip(
            Stream.runCollect(RedisConnection.executeStreamed(service, ["BIG", "5"], { timeout: "50 millis" }))
          )
          assert.strictEqual(error.reason._tag, "Timeout")
          assert.isFalse(error.written)
          assert.include(error.message, "(size 1) became free within 50 ms; the command was not sent")
          const unsubmitted = yield* Effect.flip(service.submit(["BIG", "5"], { timeout: "50 millis" }))
          assert.strictEqual(unsubmitted.reason._tag, "Timeout")
          assert.isFalse(unsubmitted.written)
          server.open()
          yield* Fiber.join(busy)
          // The connection is free again and serves the next call; the timed-out command never went out.
          assert.strictEqual(text(yield* service.execute(["GET", "k"])), "val")
          assert.deepStrictEqual(
            server.received.filter((name) => name !== "PING"),
            ["LATE", "GET"]
          )
        })
      )
  )

  it.live("shared: a lagging stream with a reply waiting behind it fails with StreamOverflow; that reply arrives", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* peer
        const { service } = yield* build("single", server.url)
        const rows = 300_000
        const pull = yield* Stream.toPull(
          RedisConnection.executeStreamed(service, ["BIG", String(rows)], {
            highWaterMark: 16384,
            maxBuffered: 262144
          })
        )
        yield* pull
        const stream = recent[recent.length - 1]!
        // Another caller on the same connection: its reply is behind the streamed one.
        const get = yield* Effect.forkChild(service.execute(["GET", "k"]))
        assert.strictEqual(text(yield* Fiber.join(get)), "val")
        const exit = yield* Effect.exit(pull)
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) {
          const error = Cause.findErrorOption(exit.cause)
          const tag = error._tag === "Some" && !Cause.isDone(error.value) ? error.value.reason._tag : "none"
          assert.strictEqual(tag, "StreamOverflow")
        }
        assert.strictEqual(stream.received, wireSize(rows) - 4)
        assert.isBelow(stream.peakBuffered, 262144 + 2 * 65536)
        assert.strictEqual(stream.bufferedBytes, 0)
        assert.strictEqual(text(yield* service.execute(["GET", "k"])), "val")
      })
    )
  )

  it.live(
    "a connection lost mid-reply fails the stream (written: true); the next command runs on a new connection",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* peer
          const { service } = yield* build("single", server.url)
          const error = yield* Effect.flip(
            Stream.runCollect(RedisConnection.executeStreamed(service, ["HALF", "1000"]))
          )
          assert.strictEqual(error.reason._tag, "ConnectionLost")
          assert.isTrue(error.written)
          assert.strictEqual(text(yield* service.execute(["GET", "k"])), "val")
        })
      )
  )

  it.live("a timeout before the reply begins fails the stream; the late reply is discarded, not kept", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* peer
        const { service } = yield* build("single", server.url)
        const error = yield* Effect.flip(
          Stream.runCollect(RedisConnection.executeStreamed(service, ["LATE", "50000"], { timeout: "50 millis" }))
        )
        assert.strictEqual(error.reason._tag, "Timeout")
        assert.isTrue(error.written)
        const stream = recent[recent.length - 1]!
        server.open()
        assert.strictEqual(text(yield* service.execute(["GET", "k"])), "val")
        assert.isTrue(stream.ended)
        assert.strictEqual(stream.delivered, 0)
        assert.strictEqual(stream.peakBuffered, 0)
      })
    )
  )

  it.live("a reply that is not an array, and an error reply, arrive like execute's", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* peer
        const { service } = yield* build("single", server.url)
        const parts = yield* Stream.runCollect(RedisConnection.executeStreamed(service, ["GET", "k"]))
        assert.strictEqual(parts.length, 1)
        assert.strictEqual(parts[0]!._tag === "Value" ? text(parts[0]!.value) : "", "val")
        const failed = yield* Effect.flip(Stream.runCollect(RedisConnection.executeStreamed(service, ["NOPE"])))
        assert.strictEqual(failed.reason._tag, "Reply")
        assert.strictEqual(text(yield* service.execute(["GET", "k"])), "val")
      })
    )
  )
})

/** A fold of the test replies: the row ids in order, the header and statistics as text, what it was told. */
const testFold = (onRow?: (id: number) => void) => {
  const ids: Array<number> = []
  const events: Array<string> = []
  let element = -1
  let whole: unknown
  const fold: RedisConnection.ReplyFold<{ ids: Array<number>; events: Array<string>; whole: unknown }> = {
    depth: 2,
    open: (depth, length) => {
      if (depth === 1) element++
      events.push(`open ${depth} ${length}`)
    },
    value: (depth, value) => {
      if (depth === 0) whole = value
      else if (depth === 1) element++
      else if (element === 1) {
        const id = (value as Array<number>)[0]!
        ids.push(id)
        onRow?.(id)
      } else events.push(`value ${depth} ${text(value)}`)
    },
    close: (depth) => {
      events.push(`close ${depth}`)
    },
    result: () => ({ ids, events, whole })
  }
  return fold
}

describe("executeFolded", () => {
  for (const kind of kinds) {
    it.live(
      `${kind}: rows reach the fold while the reply is still being sent; the result equals a whole reply's fold`,
      () =>
        Effect.scoped(
          Effect.gen(function* () {
            const server = yield* peer
            const { service } = yield* build(kind, server.url)
            let firstRowBeforeGate: boolean | undefined
            const folded = yield* RedisConnection.executeFolded(service, ["GATED", "500"], () =>
              testFold((id) => {
                if (id === 0) {
                  firstRowBeforeGate = !server.gateOpened
                  server.open()
                }
              })
            )
            assert.isTrue(firstRowBeforeGate, "row 0 was folded while the peer held the rest back")
            assert.deepStrictEqual(
              folded.ids,
              Array.from({ length: 500 }, (_, i) => i)
            )
            // The same command folded from the whole reply (a service without executeFolded).
            const whole = yield* RedisConnection.executeFolded({ execute: service.execute }, ["BIG", "500"], () =>
              testFold()
            )
            assert.deepStrictEqual(whole, folded)
            assert.deepStrictEqual(folded.events.slice(0, 3), ["open 0 3", "open 1 1", "value 2 h"])
            assert.strictEqual(text(yield* service.execute(["GET", "k"])), "val")
          })
        )
    )

    it.live(`${kind}: a large folded reply with other callers behind it: every reply right and in order`, () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* peer
          const { service } = yield* build(kind, server.url)
          const rows = 100_000
          const [folded, gets] = yield* Effect.all(
            [
              RedisConnection.executeFolded(service, ["BIG", String(rows)], () => testFold()),
              Effect.forEach(Array.from({ length: 20 }), () => service.execute(["GET", "k"]), {
                concurrency: "unbounded"
              })
            ],
            { concurrency: "unbounded" }
          )
          assert.strictEqual(folded.ids.length, rows)
          assert.isTrue(folded.ids.every((id, i) => id === i))
          assert.deepStrictEqual(gets.map(text), Array(20).fill("val"))
        })
      )
    )
  }

  it.live("a reply that is not an array is folded whole; an error reply fails like execute's and is not folded", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* peer
        const { service } = yield* build("single", server.url)
        const got = yield* RedisConnection.executeFolded(service, ["GET", "k"], () => testFold())
        assert.strictEqual(text(got.whole), "val")
        assert.deepStrictEqual(got.ids, [])
        let asked = false
        const failed = yield* Effect.flip(
          RedisConnection.executeFolded(service, ["NOPE"], () => {
            asked = true
            return testFold()
          })
        )
        assert.strictEqual(failed.reason._tag, "Reply")
        assert.isTrue(asked, "the fold was made for the command")
        assert.strictEqual(text(yield* service.execute(["GET", "k"])), "val")
      })
    )
  )

  it.live(
    "a fold that throws fails its command with the defect; the rest is skipped and the connection stays in step",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* peer
          const { service } = yield* build("single", server.url)
          let calls = 0
          const exit = yield* Effect.exit(
            RedisConnection.executeFolded(service, ["BIG", "5000"], () =>
              testFold((id) => {
                calls++
                if (id === 10) throw new Error("fold broke at row 10")
              })
            )
          )
          assert.isTrue(Exit.isFailure(exit))
          if (Exit.isFailure(exit)) assert.include(String(Cause.squash(exit.cause)), "fold broke at row 10")
          assert.strictEqual(calls, 11, "not called again after it threw")
          assert.strictEqual(text(yield* service.execute(["GET", "k"])), "val")
        })
      )
  )

  it.live("a connection lost mid-reply fails the folded command (ConnectionLost, written); the next runs", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* peer
        const { service } = yield* build("single", server.url)
        const error = yield* Effect.flip(RedisConnection.executeFolded(service, ["HALF", "1000"], () => testFold()))
        assert.strictEqual(error.reason._tag, "ConnectionLost")
        assert.isTrue(error.written)
        assert.strictEqual(text(yield* service.execute(["GET", "k"])), "val")
      })
    )
  )

  it.live("a timeout applies until the whole reply has arrived, as for execute", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* peer
        const { service } = yield* build("single", server.url)
        const error = yield* Effect.flip(
          RedisConnection.executeFolded(service, ["GATED", "1000"], () => testFold(), { timeout: "100 millis" })
        )
        assert.strictEqual(error.reason._tag, "Timeout")
        assert.isTrue(error.written)
        server.open()
        assert.strictEqual(text(yield* service.execute(["GET", "k"])), "val")
      })
    )
  )
})
