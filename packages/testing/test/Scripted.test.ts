import { Buffer } from "node:buffer"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import { MapReply, PushReply } from "@effect-falkordb/resp/Reply"
import * as RespTestServer from "@effect-falkordb/testing/RespTestServer"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Scope } from "effect"
import { TestClock } from "effect/testing"
import { command, connect } from "./support/RawClient.ts"

const text = (buffer: Buffer) => buffer.toString("latin1")

describe("RespTestServer scripting, seen by a raw node:net client", () => {
  it.effect("default handshake: PING, HELLO 2/3, SELECT, CLIENT SETNAME, AUTH, QUIT", () =>
    Effect.gen(function* () {
      const server = yield* RespTestServer.make({
        handler: (request, connection) =>
          request.name === "WHO"
            ? [
                connection.protocol,
                connection.name === undefined ? null : Buffer.from(connection.name),
                connection.database,
                connection.id
              ]
            : undefined
      })
      const client = yield* connect(server.port)
      const hello2 =
        "*14\r\n$6\r\nserver\r\n+redis\r\n+version\r\n+7.0.15\r\n+proto\r\n:2\r\n+id\r\n:1\r\n+mode\r\n+standalone\r\n+role\r\n+master\r\n+modules\r\n*0\r\n"
      yield* client.send(command("PING") + command("PING", "hi") + command("HELLO", "2"))
      // encodeReply writes map keys given as strings as simple strings.
      const expected2 = `+PONG\r\n$2\r\nhi\r\n${hello2.replace("$6\r\nserver", "+server")}`
      assert.strictEqual(text(yield* client.awaitBytes(expected2.length)), expected2)

      yield* client.send(command("HELLO", "3", "SETNAME", "app") + command("SELECT", "3") + command("WHO"))
      const hello3 =
        "%7\r\n+server\r\n+redis\r\n+version\r\n+7.0.15\r\n+proto\r\n:3\r\n+id\r\n:1\r\n+mode\r\n+standalone\r\n+role\r\n+master\r\n+modules\r\n*0\r\n"
      const who = "*4\r\n:3\r\n$3\r\napp\r\n:3\r\n:1\r\n"
      const expected3 = `${expected2}${hello3}+OK\r\n${who}`
      assert.strictEqual(text(yield* client.awaitBytes(expected3.length)), expected3)

      yield* client.send(command("CLIENT", "SETNAME", "other") + command("WHO") + command("AUTH", "pw"))
      const auth =
        "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n"
      const expected4 = `${expected3}+OK\r\n*4\r\n:3\r\n$5\r\nother\r\n:3\r\n:1\r\n${auth}`
      assert.strictEqual(text(yield* client.awaitBytes(expected4.length)), expected4)

      yield* client.send(command("QUIT"))
      assert.strictEqual(yield* client.awaitClose, undefined)
      assert.isTrue(text(client.bytes()).endsWith("+OK\r\n"))
    })
  )

  it.effect("a HELLO above maxProtocol is NOPROTO; a password is enforced", () =>
    Effect.gen(function* () {
      const server = yield* RespTestServer.make({ maxProtocol: 2, password: "secret" })
      const client = yield* connect(server.port)
      yield* client.send(
        command("PING") + command("HELLO", "3") + command("AUTH", "nope") + command("AUTH", "secret") + command("PING")
      )
      const expected =
        "-NOAUTH Authentication required.\r\n-NOPROTO unsupported protocol version\r\n-WRONGPASS invalid username-password pair or user is disabled.\r\n+OK\r\n+PONG\r\n"
      assert.strictEqual(text(yield* client.awaitBytes(expected.length)), expected)
    })
  )

  it.effect("unscripted commands get an error naming them; requests are recorded", () =>
    Effect.gen(function* () {
      const server = yield* RespTestServer.make()
      const client = yield* connect(server.port)
      yield* client.send(command("GET", "key:1") + command("FLUSHALL"))
      const expected = "-ERR unscripted command 'GET', with args: 'key:1'\r\n-ERR unscripted command 'FLUSHALL'\r\n"
      assert.strictEqual(text(yield* client.awaitBytes(expected.length)), expected)
      const received = yield* server.received
      assert.deepStrictEqual(
        received.map((r) => [r.connection, r.name, ...r.command]),
        [
          [1, "GET", "GET", "key:1"],
          [1, "FLUSHALL", "FLUSHALL"]
        ]
      )
      assert.deepStrictEqual([...received[0]!.args[1]!], [...Buffer.from("key:1")])
      assert.strictEqual(yield* server.connections, 1)
    })
  )

  it.effect("replies are encoded in the connection's protocol; raw bytes pass unchanged", () =>
    Effect.gen(function* () {
      const server = yield* RespTestServer.make({
        handler: (request) => {
          switch (request.name) {
            case "NULL":
              return null
            case "MAP":
              return new MapReply(["a", 1.5, "b", true])
            case "RAW":
              return RespTestServer.raw("$3\r\n\x00\xff\r\n\r\n")
            default:
              return undefined
          }
        }
      })
      const client = yield* connect(server.port)
      yield* client.send(command("NULL") + command("MAP") + command("RAW"))
      const resp2 = "$-1\r\n*4\r\n+a\r\n$3\r\n1.5\r\n+b\r\n:1\r\n$3\r\n\x00\xc3\xbf\r\n\r\n"
      assert.strictEqual(text(yield* client.awaitBytes(resp2.length)), resp2)
      yield* client.send(command("HELLO", "3") + command("NULL") + command("MAP"))
      const hello3 =
        "%7\r\n+server\r\n+redis\r\n+version\r\n+7.0.15\r\n+proto\r\n:3\r\n+id\r\n:1\r\n+mode\r\n+standalone\r\n+role\r\n+master\r\n+modules\r\n*0\r\n"
      const resp3 = `${hello3}_\r\n%2\r\n+a\r\n,1.5\r\n+b\r\n#t\r\n`
      assert.strictEqual(text(yield* client.awaitBytes(resp2.length + resp3.length)), resp2 + resp3)
    })
  )

  it.effect("split writes arrive as the scripted pieces, one per gap of the clock", () =>
    Effect.gen(function* () {
      const server = yield* RespTestServer.make({
        handler: (request) =>
          request.name === "GET"
            ? RespTestServer.steps({ split: 3, gap: "100 millis" }, { write: "$5\r\nhello\r\n" })
            : undefined
      })
      const client = yield* connect(server.port)
      yield* client.send(command("GET", "k"))
      yield* client.awaitChunks(1)
      // The next piece is due 100 ms after the request arrived: nothing more comes before.
      assert.deepStrictEqual(client.chunks().map(text), ["$5\r"])
      for (const [i, piece] of ["\nhe", "llo", "\r\n"].entries()) {
        yield* TestClock.adjust("100 millis")
        const chunks = yield* client.awaitChunks(i + 2)
        assert.strictEqual(text(chunks[i + 1]!), piece)
      }
      assert.strictEqual(text(client.bytes()), "$5\r\nhello\r\n")
    })
  )

  it.effect("split without a gap still delivers every byte of a large reply", () =>
    Effect.gen(function* () {
      const payload = Buffer.alloc(200_000, 0x61)
      const server = yield* RespTestServer.make({
        handler: () => RespTestServer.steps({ split: 1000 }, { reply: payload })
      })
      const client = yield* connect(server.port)
      yield* client.send(command("GET", "big"))
      const expected = Buffer.concat([Buffer.from("$200000\r\n"), payload, Buffer.from("\r\n")])
      const bytes = yield* client.awaitBytes(expected.length)
      assert.isTrue(bytes.equals(expected))
    })
  )

  it.effect("a delay holds back this reply and every later one on the connection, in order", () =>
    Effect.gen(function* () {
      const server = yield* RespTestServer.make({
        handler: (request) =>
          request.name === "SLOW" ? RespTestServer.steps({ delay: "1 second" }, { reply: "late" }) : undefined
      })
      const client = yield* connect(server.port)
      yield* client.send(command("SLOW") + command("PING"))
      yield* server.awaitReceived(2)
      yield* TestClock.adjust("999 millis")
      assert.strictEqual(client.bytes().length, 0)
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(text(yield* client.awaitBytes(13)), "+late\r\n+PONG\r\n")
    })
  )

  it.effect("malformed frames, extra replies and pushes reach the client byte for byte", () =>
    Effect.gen(function* () {
      const server = yield* RespTestServer.make({
        handler: (request) => {
          switch (request.name) {
            case "BAD":
              return RespTestServer.steps({ write: "$abc\r\n" })
            case "TWICE":
              return RespTestServer.steps({ reply: "OK" }, { reply: "EXTRA" })
            case "PUSHY":
              return RespTestServer.steps({ reply: new PushReply(["message", "ch", "hi"]) }, { reply: 1 })
            default:
              return undefined
          }
        }
      })
      const client = yield* connect(server.port)
      yield* client.send(command("TWICE") + command("HELLO", "3") + command("PUSHY") + command("BAD"))
      const bytes = text(yield* client.awaitBytes(16 + 108 + 26 + 6))
      assert.isTrue(bytes.startsWith("+OK\r\n+EXTRA\r\n%7\r\n"))
      assert.isTrue(bytes.endsWith("*0\r\n>3\r\n+message\r\n+ch\r\n+hi\r\n:1\r\n$abc\r\n"))
    })
  )

  it.effect("noReply swallows a request; the next one is answered", () =>
    Effect.gen(function* () {
      const server = yield* RespTestServer.make({
        handler: (request) => (request.name === "BLACKHOLE" ? RespTestServer.noReply : undefined)
      })
      const client = yield* connect(server.port)
      yield* client.send(command("BLACKHOLE") + command("PING"))
      assert.strictEqual(text(yield* client.awaitBytes(7)), "+PONG\r\n")
      assert.strictEqual((yield* server.received).length, 2)
    })
  )

  it.effect("drop closes the socket after the bytes written before it; reset sends RST", () =>
    Effect.gen(function* () {
      const server = yield* RespTestServer.make({
        handler: (request) => {
          if (request.name === "HALF") return RespTestServer.steps({ write: "$10\r\nhel" }, { drop: true })
          if (request.name === "RST") return RespTestServer.steps({ drop: "reset" })
          return undefined
        }
      })
      const first = yield* connect(server.port)
      yield* first.send(command("HALF"))
      assert.strictEqual(yield* first.awaitClose, undefined)
      assert.strictEqual(text(first.bytes()), "$10\r\nhel")

      const second = yield* connect(server.port)
      yield* second.send(command("RST"))
      assert.strictEqual(yield* second.awaitClose, "ECONNRESET")
      assert.strictEqual(yield* server.accepted, 2)
    })
  )

  it.effect("a malformed request is answered with a protocol error and the connection closed", () =>
    Effect.gen(function* () {
      const server = yield* RespTestServer.make()
      const client = yield* connect(server.port)
      yield* client.send("*1\r\n$x\r\n")
      yield* client.awaitClose
      assert.isTrue(text(client.bytes()).startsWith("-ERR Protocol error: "))
      const inline = yield* connect(server.port)
      yield* inline.send("*1\r\n:1\r\n")
      yield* inline.awaitClose
      assert.strictEqual(text(inline.bytes()), "-ERR Protocol error: expected an array of bulk strings\r\n")
    })
  )

  it.effect("effectful handlers, handler failures, setHandler and closeClients", () =>
    Effect.gen(function* () {
      const server = yield* RespTestServer.make({
        handler: (request) => {
          if (request.name === "BOOM") throw new Error("kaboom")
          if (request.name === "FAIL") return Effect.fail("nope")
          if (request.name === "ASYNC") return Effect.succeed(Buffer.from("done"))
          return undefined
        }
      })
      const client = yield* connect(server.port)
      yield* client.send(command("BOOM") + command("FAIL") + command("ASYNC"))
      const expected = "-ERR test server handler failed: kaboom\r\n-ERR test server handler failed: "
      const bytes = text(yield* client.awaitBytes(expected.length + 20))
      assert.isTrue(bytes.startsWith(expected))
      assert.isTrue((yield* client.awaitBytes(bytes.indexOf("$4") + 10)).toString().endsWith("$4\r\ndone\r\n"))
      assert.strictEqual((yield* server.handlerFailures).length, 2)

      yield* server.setHandler(() => "changed")
      yield* client.send(command("ANY"))
      const before = client.bytes().length
      assert.isTrue(text(yield* client.awaitBytes(before + 10)).endsWith("+changed\r\n"))

      yield* server.closeClients
      yield* client.awaitClose
      // the listener stays up
      const again = yield* connect(server.port)
      yield* again.send(command("X"))
      assert.strictEqual(text(yield* again.awaitBytes(10)), "+changed\r\n")
    })
  )

  it.effect("the layer provides the server; closing its scope closes every client socket", () =>
    Effect.gen(function* () {
      const outer = yield* Effect.scope
      const client = yield* Effect.scoped(
        Effect.gen(function* () {
          const server = yield* RespTestServer.RespTestServer
          assert.strictEqual(server.url, `redis://127.0.0.1:${server.port}`)
          // The client belongs to the test's scope, so only the server can close it.
          const client = yield* connect(server.port).pipe(Scope.provide(outer))
          yield* client.send(command("PING"))
          yield* client.awaitBytes(7)
          return client
        }).pipe(Effect.provide(RespTestServer.layer()))
      )
      assert.strictEqual(yield* client.awaitClose, undefined)
    })
  )
})

describe("RespTestServer with the real connection engine", () => {
  it.live(
    "the defaults let RedisConnection handshake (HELLO 3, AUTH, SELECT, SETNAME); faults reach it as scripted",
    () =>
      Effect.gen(function* () {
        const server = yield* RespTestServer.make({
          password: "pw",
          handler: (request, connection) => {
            switch (request.name) {
              case "WHO":
                return [connection.protocol, connection.database, Buffer.from(connection.name ?? "")]
              case "SPLIT":
                return RespTestServer.steps({ split: 1 }, { reply: new MapReply(["k", Buffer.from("v")]) })
              case "CUT":
                return RespTestServer.steps({ write: "$100\r\npartial" }, { drop: true })
              default:
                return undefined
            }
          }
        })
        const redis = yield* RedisConnection.makeSingle({
          url: server.url,
          password: "pw",
          protocol: 3,
          database: 2,
          clientName: "scripted",
          commandTimeout: "10 seconds"
        })
        assert.deepStrictEqual(yield* redis.execute(["WHO"]), [3, 2, Buffer.from("scripted")])
        assert.strictEqual(redis.info.protocol, 3)
        // A RESP3 map written one byte per socket write still decodes to one reply.
        const map = yield* redis.execute(["SPLIT"])
        assert.instanceOf(map, MapReply)
        assert.deepStrictEqual((map as MapReply).get("k"), Buffer.from("v"))
        // A reply cut mid-bulk by a drop: the command may have run, so the client says so.
        const lost = yield* Effect.flip(redis.execute(["CUT"]))
        assert.strictEqual(lost.reason._tag, "ConnectionLost")
        assert.isTrue(lost.written)
        const handshakes = (yield* server.received).filter((r) => r.name === "HELLO")
        assert.isAtLeast(handshakes.length, 1)
      })
  )
})
