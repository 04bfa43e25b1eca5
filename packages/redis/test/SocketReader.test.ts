/**
 * The plain-socket reader (`onread` into slab tails): replies kept from earlier reads are never
 * overwritten by later ones, and bytes a server sends before the reader is attached wait for it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Net from "node:net"
import { makeSingle } from "../src/RedisConnection.ts"
import * as RedisOptions from "../src/RedisOptions.ts"
import { openSocket, SocketReader } from "../src/internal/Socket.ts"
import * as FakeServer from "./fixtures/FakeServer.ts"

const bulk = (payload: string) => `$${Buffer.byteLength(payload)}\r\n${payload}\r\n`

describe("SocketReader", () => {
  it.live("replies kept from many reads across many slabs stay as they arrived", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const fake = yield* FakeServer.make((command) => (command[0] === "ECHO" ? bulk(command[1]!) : "+OK\r\n"))
        const redis = yield* makeSingle({ url: fake.url })
        // Sizes from 1 byte to 40 KiB: small replies share a slab, large ones roll it over.
        const payloads = Array.from({ length: 600 }, (_, i) =>
          String.fromCharCode(97 + (i % 26)).repeat(i % 7 === 0 ? 1 + ((i * 977) % 40_000) : 1 + (i % 50))
        )
        const kept: Array<unknown> = []
        for (let round = 0; round < 3; round++) {
          const replies = yield* Effect.forEach(payloads, (payload) => redis.execute(["ECHO", payload]), {
            concurrency: 16
          })
          kept.push(...replies)
        }
        // Checked only now, after every later read: none of them wrote over a kept reply.
        kept.forEach((reply, i) => {
          assert.instanceOf(reply, Uint8Array)
          assert.strictEqual(new TextDecoder().decode(reply as Uint8Array), payloads[i % payloads.length], `reply ${i}`)
        })
      })
    )
  )

  it.live("bytes the server sends before the reader is attached are handed over on attach, in order", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Effect.acquireRelease(
          Effect.callback<Net.Server>((resume) => {
            const server = Net.createServer((socket) => {
              socket.write("-ERR first\r\n")
              setTimeout(() => socket.write("+second\r\n"), 20)
            })
            server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
          }),
          (server) =>
            Effect.callback<void>((resume) => {
              server.close(() => resume(Effect.void))
            })
        )
        const port = (server.address() as Net.AddressInfo).port
        const options = yield* RedisOptions.resolve({ url: `redis://127.0.0.1:${port}` })
        const reader = new SocketReader()
        const socket = yield* Effect.acquireRelease(openSocket(options, options.address, options.target, reader), (s) =>
          Effect.sync(() => s.destroy())
        )
        const expected = "-ERR first\r\n+second\r\n"
        // Both writes read (by the reader, nobody attached yet).
        while (socket.bytesRead < expected.length) yield* Effect.sleep(5)
        const received: Array<string> = []
        reader.attach((chunk) => received.push(Buffer.from(chunk).toString()))
        assert.strictEqual(received.join(""), expected)
        assert.isFalse(socket.destroyed)
      })
    )
  )
})
