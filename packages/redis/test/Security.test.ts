/**
 * The security suite on real servers: Debian's redis-server with a TLS port, certificates made
 * in the test by a private CA (`fixtures/Certificates.ts`). Private-CA TLS on every strategy;
 * hostname verification on by default, `servername`; an unknown CA; mutual TLS; unix sockets on
 * every strategy; and bad input (unreadable file, key not matching its certificate, expired
 * certificates, a password with `@ : % /` in a URL) as typed errors naming the field, never
 * the secret. Every server is stopped with its scope.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { replyToString } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs"
import * as RedisConnection from "../src/RedisConnection.ts"
import type { RedisError } from "../src/RedisError.ts"
import { failureOf } from "./fixtures/Failure.ts"
import * as Certificates from "./fixtures/Certificates.ts"

const strategies = ["single", "multiplexed", "pooled"] as const

const configField = (error: RedisError): string | undefined =>
  error.reason._tag === "Config" ? error.reason.field : undefined

/** A TLS server (no module) with the certificates; `clients`: mutual TLS. */
const tlsServer = (options: { readonly cert?: "server" | "expired"; readonly clients?: boolean } = {}) =>
  Effect.gen(function* () {
    const certificates = yield* Certificates.make
    const tlsPort = yield* Certificates.freePort
    const server = yield* Embedded.make({ module: false, args: Certificates.tlsArgs(certificates, tlsPort, options) })
    return { certificates, tlsPort, server }
  })

/** Every strategy against the options: SET then GET through each. */
const everyStrategy = (options: RedisConnection.LayerOptions) =>
  Effect.forEach(strategies, (strategy) =>
    Effect.gen(function* () {
      const redis = yield* RedisConnection.makeFromOptions({ ...options, strategy })
      assert.strictEqual(yield* redis.execute(["SET", `k:${strategy}`, strategy]), "OK", strategy)
      assert.strictEqual(replyToString(yield* redis.execute(["GET", `k:${strategy}`])), strategy)
      return redis.info.strategy
    })
  )

describe("security", { timeout: 60_000 }, () => {
  it.live("private-CA TLS on every strategy, hostname verification on by default, servername", () =>
    Effect.gen(function* () {
      const { certificates, tlsPort } = yield* tlsServer()
      const { files, serverName } = certificates
      assert.deepStrictEqual(
        yield* everyStrategy({ host: "127.0.0.1", port: tlsPort, tls: { caFile: files.ca, servername: serverName } }),
        [...strategies]
      )
      // The same through rediss:// with the CA as bytes.
      yield* everyStrategy({
        url: `rediss://127.0.0.1:${tlsPort}`,
        tls: { ca: certificates.read(files.ca), servername: serverName }
      })
      // The certificate names redis.test, not 127.0.0.1: refused without servername.
      const wrongName = failureOf(
        yield* Effect.exit(
          RedisConnection.makeSingle({ url: `rediss://127.0.0.1:${tlsPort}`, tls: { caFile: files.ca } })
        )
      )
      assert.strictEqual(wrongName.reason._tag, "Offline")
      assert.include(wrongName.message, "does not name this host")
      // A CA this client does not trust (the system CAs by default, or another private CA).
      for (const tls of [{ servername: serverName }, { caFile: files.otherCa, servername: serverName }]) {
        const unknownCa = failureOf(
          yield* Effect.exit(RedisConnection.makeSingle({ host: "127.0.0.1", port: tlsPort, tls }))
        )
        assert.strictEqual(unknownCa.reason._tag, "Offline")
        assert.include(unknownCa.message, "not signed by a CA this client trusts")
      }
      // The TLS port is not a plain port, and the plain port is not a TLS one: typed, bounded.
      const plain = failureOf(
        yield* Effect.exit(RedisConnection.makeSingle({ url: `redis://127.0.0.1:${tlsPort}`, connectTimeout: 1000 }))
      )
      assert.include(["Offline", "ConnectionLost"], plain.reason._tag)
    })
  )

  it.live("mutual TLS: a client certificate is required; every strategy connects with one, none without", () =>
    Effect.gen(function* () {
      const { certificates, tlsPort } = yield* tlsServer({ clients: true })
      const { files, serverName } = certificates
      const base = { host: "127.0.0.1", port: tlsPort, connectTimeout: 2000 }
      yield* everyStrategy({
        ...base,
        tls: { caFile: files.ca, certFile: files.clientCert, keyFile: files.clientKey, servername: serverName }
      })
      const without = failureOf(
        yield* Effect.exit(RedisConnection.makeSingle({ ...base, tls: { caFile: files.ca, servername: serverName } }))
      )
      assert.include(["Offline", "ConnectionLost"], without.reason._tag)
    })
  )

  it.live("bad TLS input: a typed Config error naming the field, never the key", () =>
    Effect.gen(function* () {
      const { certificates, tlsPort } = yield* tlsServer({ cert: "expired" })
      const { files, serverName } = certificates
      const keyText = Fs.readFileSync(files.clientKey, "utf8")
      const base = { host: "127.0.0.1", port: tlsPort }
      const refuse = (tls: RedisConnection.LayerOptions["tls"]) =>
        Effect.map(Effect.exit(RedisConnection.makeSingle({ ...base, tls })), failureOf)

      const missing = yield* refuse({ caFile: `${certificates.dir}/no-such-ca.crt` })
      assert.strictEqual(configField(missing), "tls.caFile")
      assert.include(missing.message, "no such file")
      // A path that cannot be read as a file (a directory): EISDIR, named with the field.
      const unreadable = yield* refuse({ caFile: files.ca, certFile: files.clientCert, keyFile: certificates.dir })
      assert.strictEqual(configField(unreadable), "tls.keyFile")
      assert.include(unreadable.message, "EISDIR")

      const mismatch = yield* refuse({ caFile: files.ca, certFile: files.clientCert, keyFile: files.strayKey })
      assert.strictEqual(configField(mismatch), "tls.key")
      assert.include(mismatch.message, "does not match")
      const expiredClient = yield* refuse({ caFile: files.ca, certFile: files.expiredCert, keyFile: files.expiredKey })
      assert.strictEqual(configField(expiredClient), "tls.cert")
      assert.include(expiredClient.message, "expired")
      const halfPair = yield* refuse({ caFile: files.ca, certFile: files.clientCert })
      assert.strictEqual(configField(halfPair), "tls.key")
      // The server's certificate has expired: the connect fails, typed, saying so.
      const expiredServer = yield* refuse({ caFile: files.ca, servername: serverName })
      assert.strictEqual(expiredServer.reason._tag, "Offline")
      assert.include(expiredServer.message, "expired")
      for (const error of [missing, unreadable, mismatch, expiredClient, halfPair, expiredServer]) {
        assert.notInclude(error.message, "PRIVATE KEY")
        assert.notInclude(error.message, keyText.slice(40, 80))
      }
    })
  )

  it.live("unix sockets on every strategy, with an ACL user", () =>
    Effect.gen(function* () {
      const server = yield* Embedded.make({ module: false, unixSocket: true })
      const path = server.unixSocket!
      const admin = yield* RedisConnection.makeSingle({ path })
      yield* admin.execute(["ACL", "SETUSER", "app", "on", ">unix-secret", "+@all", "~*"])
      yield* everyStrategy({ path, username: "app", password: "unix-secret" })
      yield* everyStrategy({ url: `unix://${path}?user=app&password=unix-secret` })
      const clients = String(yield* admin.execute(["CLIENT", "LIST"]))
      assert.match(clients, /user=app/)
      assert.notMatch(clients, /user=app .*addr=127\.0\.0\.1/)
    })
  )

  it.live(
    "a password holding @ : % / in a URL: percent-encoded it authenticates; raw it is a typed error that hides it",
    () =>
      Effect.gen(function* () {
        const server = yield* Embedded.make({ module: false })
        const admin = yield* RedisConnection.makeSingle({ url: server.url })
        const password = "p@ss:w%rd/1"
        yield* admin.execute(["ACL", "SETUSER", "app", "on", `>${password}`, "+@all", "~*"])
        const encoded = `redis://app:${encodeURIComponent(password)}@127.0.0.1:${server.port}`
        assert.strictEqual(yield* (yield* RedisConnection.makeSingle({ url: encoded })).execute(["PING"]), "PONG")
        for (const raw of [
          `redis://app:${password}@127.0.0.1:${server.port}`,
          `redis://app:w%rd@127.0.0.1:${server.port}`,
          `redis://127.0.0.1:${server.port}/x?password=${encodeURIComponent(password)}`
        ]) {
          const error = failureOf(yield* Effect.exit(RedisConnection.makeSingle({ url: raw })))
          assert.strictEqual(configField(error), "url", raw)
          for (const piece of ["p@ss", "w%rd", "rd/1", encodeURIComponent(password)])
            assert.notInclude(error.message, piece)
        }
      })
  )
})
