import { Buffer } from "node:buffer"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as FixtureReplay from "@effect-falkordb/testing/FixtureReplay"
import * as RespTestServer from "@effect-falkordb/testing/RespTestServer"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { command, connect } from "./support/RawClient.ts"

const commandOf = (args: ReadonlyArray<string>) => command(...args)

describe("FixtureReplay", () => {
  it.effect("finds the shared fixtures beside the checkout, or FIXTURES_DIR", () =>
    Effect.gen(function* () {
      const found = yield* FixtureReplay.fixturesDir({ env: {} })
      assert.isTrue(Fs.existsSync(Path.join(found, "falkordb-4.4.0", "README.md")))
      const tmp = Fs.mkdtempSync(Path.join(Os.tmpdir(), "fixtures-"))
      try {
        assert.strictEqual(yield* FixtureReplay.fixturesDir({ env: { FIXTURES_DIR: tmp } }), tmp)
        const missing = yield* Effect.flip(FixtureReplay.fixturesDir({ env: { FIXTURES_DIR: Path.join(tmp, "nope") } }))
        assert.strictEqual(missing.reason, "DirectoryNotFound")
        const nowhere = yield* Effect.flip(FixtureReplay.fixturesDir({ env: {}, from: tmp }))
        assert.strictEqual(nowhere.reason, "DirectoryNotFound")
      } finally {
        Fs.rmSync(tmp, { recursive: true })
      }
    })
  )

  it.effect("the 4.16 set recorded by this repository is read from its own fixtures folder", () =>
    Effect.gen(function* () {
      const own = FixtureReplay.repositoryVersionDir("falkordb-4.16.3")
      assert.isDefined(own)
      assert.strictEqual(Path.basename(Path.dirname(own!)), "fixtures")
      assert.isUndefined(FixtureReplay.repositoryVersionDir("falkordb-4.4.0"))
      const fixture = yield* FixtureReplay.loadScenario("falkordb-4.16.3", "nodes")
      assert.include(fixture.server, "v4.16.3")
    })
  )

  it.effect("a file that is not in the corpus format is a typed error", () =>
    Effect.gen(function* () {
      const tmp = Fs.mkdtempSync(Path.join(Os.tmpdir(), "fixtures-"))
      try {
        const bad = Path.join(tmp, "bad.json")
        Fs.writeFileSync(bad, JSON.stringify({ scenario: "x", exchanges: [{ request: [1] }] }))
        const invalid = yield* Effect.flip(FixtureReplay.load(bad))
        assert.strictEqual(invalid.reason, "InvalidFixture")
        const unreadable = yield* Effect.flip(FixtureReplay.loadScenario("falkordb-4.4.0", "no-such-scenario"))
        assert.strictEqual(unreadable.reason, "ReadFailed")
      } finally {
        Fs.rmSync(tmp, { recursive: true })
      }
    })
  )

  for (const [version, scenario] of [
    ["falkordb-4.4.0", "values-all-types"],
    ["falkordb-4.18.11", "resp3"],
    ["falkordb-4.16.3", "resp3"],
    ["falkordb-4.18.11", "schema-growth"]
  ] as const) {
    it.effect(`${version}/${scenario}: every request, replayed in recorded order, gets its recorded bytes`, () =>
      Effect.gen(function* () {
        const fixture = yield* FixtureReplay.loadScenario(version, scenario)
        const server = yield* FixtureReplay.serve(fixture)
        const client = yield* connect(server.port)
        // Read independently of the module: the JSON's own base64, in file order.
        const expected = Buffer.concat(fixture.exchanges.map((e) => Buffer.from(e.reply_base64, "base64")))
        yield* client.send(fixture.exchanges.map((e) => commandOf(e.request)).join(""))
        const bytes = yield* client.awaitBytes(expected.length)
        assert.strictEqual(bytes.length, expected.length)
        assert.isTrue(bytes.equals(expected))
        assert.strictEqual(server.replay.served(), fixture.exchanges.length)
        assert.deepStrictEqual(server.replay.unused(), [])
      })
    )
  }

  it.effect("a repeated request gets its replies in order, then the last one again", () =>
    Effect.gen(function* () {
      const fixture = yield* FixtureReplay.loadScenario("falkordb-4.4.0", "values-all-types")
      const byKey = new Map<string, Array<string>>()
      for (const e of fixture.exchanges) {
        const key = JSON.stringify(e.request)
        byKey.set(key, [...(byKey.get(key) ?? []), e.reply_base64])
      }
      const [key, replies] = [...byKey.entries()].find(([, r]) => r.length >= 2 && new Set(r).size === r.length)!
      const request = JSON.parse(key) as Array<string>
      const server = yield* FixtureReplay.serve(fixture)
      const client = yield* connect(server.port)
      const wanted = [...replies, replies[replies.length - 1]!].map((b) => Buffer.from(b, "base64"))
      yield* client.send(wanted.map(() => commandOf(request)).join(""))
      const total = wanted.reduce((n, b) => n + b.length, 0)
      assert.isTrue((yield* client.awaitBytes(total)).equals(Buffer.concat(wanted)))
    })
  )

  it.effect("one pass only; unmatched requests fall through to the defaults and the unscripted error", () =>
    Effect.gen(function* () {
      const fixture = yield* FixtureReplay.loadScenario("falkordb-4.4.0", "nodes")
      const verbose = fixture.exchanges.filter((e) => e.pass === "verbose")
      const server = yield* FixtureReplay.serve(fixture, { pass: "verbose" })
      const client = yield* connect(server.port)
      const probe = verbose.find((e) => e.phase === "probe")!
      const reply = Buffer.from(probe.reply_base64, "base64")
      // Same text, one letter changed in case: no case folding, so no match.
      const lowered = [probe.request[0]!.toLowerCase(), ...probe.request.slice(1)]
      yield* client.send(commandOf(probe.request) + command("PING") + commandOf(lowered))
      const error = `-ERR unscripted command '${lowered[0]}', with args: `
      const bytes = yield* client.awaitBytes(reply.length + 7 + error.length)
      assert.isTrue(bytes.subarray(0, reply.length).equals(reply))
      assert.strictEqual(bytes.subarray(reply.length, reply.length + 7).toString(), "+PONG\r\n")
      assert.isTrue(
        bytes
          .subarray(reply.length + 7)
          .toString()
          .startsWith(error)
      )
      assert.strictEqual(server.replay.served(), 1)
    })
  )
})

layer(FixtureReplay.layer("falkordb-4.18.11", ["nodes", "edges"]))("FixtureReplay.layer", (it) => {
  it.effect("serves several scenarios from one server", () =>
    Effect.gen(function* () {
      const server = yield* RespTestServer.RespTestServer
      const nodes = yield* FixtureReplay.loadScenario("falkordb-4.18.11", "nodes")
      const edges = yield* FixtureReplay.loadScenario("falkordb-4.18.11", "edges")
      const client = yield* connect(server.port)
      const picks = [nodes.exchanges[0]!, edges.exchanges[0]!]
      yield* client.send(picks.map((e) => commandOf(e.request)).join(""))
      const expected = Buffer.concat(picks.map((e) => Buffer.from(e.reply_base64, "base64")))
      assert.isTrue((yield* client.awaitBytes(expected.length)).equals(expected))
    })
  )
})
