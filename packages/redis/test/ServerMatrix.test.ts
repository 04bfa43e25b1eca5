/**
 * The handshake against the server under test, and which server that is. The `redis` project
 * runs it on Debian's redis-server 7.0; the server matrix (`vitest.matrix.ts`: `redis@8.2`,
 * `redis@valkey-9.1`) runs it, with the other server-facing suites, on the server its
 * `EFFECT_FALKORDB_MATRIX_SERVER` names, and this file fails when the server started is another
 * one (a matrix that quietly ran on the default server would prove nothing).
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { type Reply, replyToString } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as RedisConnection from "../src/RedisConnection.ts"
import { assertMatrixServer } from "./fixtures/Matrix.ts"

/**
 * `key=value` fields of a `CLIENT INFO` line, or `key:value` lines of an `INFO` section (a bulk
 * string in RESP2, a verbatim string in RESP3).
 */
const fields = (reply: Reply, separator: RegExp): Map<string, string> =>
  new Map(
    (replyToString(reply) ?? "")
      .split(separator)
      .map((field) => field.trim())
      .filter((field) => /^[a-z_-]+[=:]/.test(field))
      .map((field) => {
        const at = field.search(/[=:]/)
        return [field.slice(0, at), field.slice(at + 1)] as const
      })
  )

const strategies = ["single", "pooled", "multiplexed"] as const

describe("server matrix: handshake", { timeout: 60_000 }, () => {
  it.live("the server started is the one the project names, and says so over the wire", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.make()
      console.log(`server matrix: ${assertMatrixServer(server.server)} (${server.server.binary})`)
      const redis = yield* RedisConnection.makeFromOptions({ strategy: "single", url: server.url })
      const info = fields(yield* redis.execute(["INFO", "server"]), /\r?\n/)
      if (server.server.name === "valkey") {
        // Valkey names itself in server_name and valkey_version; redis_version stays 7.2.4, the
        // Redis version it is compatible with (so a client must not read the server from it).
        assert.strictEqual(info.get("server_name"), "valkey")
        assert.strictEqual(info.get("valkey_version"), server.server.version)
        assert.strictEqual(info.get("redis_version"), "7.2.4")
      } else {
        assert.strictEqual(info.get("redis_version"), server.server.version)
        assert.isUndefined(info.get("valkey_version"))
      }
    })
  )

  for (const protocol of [2, 3] as const) {
    it.live(`RESP${protocol}: an ACL user, a database and a name reach every connection of every strategy`, () =>
      Effect.gen(function* () {
        const server = yield* Embedded.make()
        const admin = yield* RedisConnection.makeFromOptions({ strategy: "single", url: server.url })
        yield* admin.execute(["ACL", "SETUSER", "matrix", "on", ">pass-word", "~*", "&*", "+@all"])
        for (const strategy of strategies) {
          const clientName = `matrix-${strategy}-${protocol}`
          const redis = yield* RedisConnection.makeFromOptions({
            strategy,
            url: server.url,
            username: "matrix",
            password: "pass-word",
            database: 5,
            clientName,
            protocol
          })
          assert.strictEqual(redis.info.protocol, protocol)
          const infos = yield* Effect.forEach(
            Array.from({ length: 16 }, () => ["CLIENT", "INFO"]),
            (command) => redis.execute(command),
            { concurrency: "unbounded" }
          )
          for (const reply of infos) {
            const client = fields(reply, / /)
            assert.strictEqual(client.get("user"), "matrix", `${strategy} RESP${protocol}`)
            assert.strictEqual(client.get("db"), "5")
            assert.strictEqual(client.get("name"), clientName)
            assert.strictEqual(client.get("resp"), String(protocol))
          }
          yield* redis.execute(["SET", `in-db-5-${strategy}-${protocol}`, "x"])
        }
        // SELECT 5 applied: the keys are in db 5, not db 0.
        assert.strictEqual(yield* admin.execute(["EXISTS", "in-db-5-single-2", "in-db-5-single-3"]), 0)
      })
    )

    it.live(`RESP${protocol}: a wrong password fails the handshake with the server's own reason`, () =>
      Effect.gen(function* () {
        const server = yield* Embedded.make()
        const admin = yield* RedisConnection.makeFromOptions({ strategy: "single", url: server.url })
        yield* admin.execute(["ACL", "SETUSER", "matrix", "on", ">right", "~*", "+@all"])
        const error = yield* Effect.flip(
          RedisConnection.makeFromOptions({
            strategy: "single",
            url: server.url,
            username: "matrix",
            password: "wrong",
            protocol
          })
        )
        assert.strictEqual(error.reason._tag, "Reply")
        if (error.reason._tag === "Reply") assert.strictEqual(error.reason.code, "WRONGPASS")
        assert.include(error.message, protocol === 3 ? "HELLO" : "AUTH")
        assert.notInclude(error.message, "wrong")
      })
    )
  }
})
