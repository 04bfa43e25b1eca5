/**
 * The command-key table, checked two ways: hand-written cases (GRAPH.*, flags, names), and
 * against a real redis-server, whose `COMMAND` and `COMMAND GETKEYS` are the reference for
 * every command it knows.
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import type { Command } from "@effect-falkordb/resp/Encoder"
import { ErrorReply, type Reply, replyToString } from "@effect-falkordb/resp/Reply"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import * as CommandKeys from "../src/CommandKeys.ts"
import { hashSlot } from "../src/internal/HashSlot.ts"
import * as RedisConnection from "../src/RedisConnection.ts"

const bytes = (s: string) => new TextEncoder().encode(s)

describe("CommandKeys (table)", () => {
  it("names are case-insensitive and may be bytes", () => {
    for (const name of ["GET", "get", "Get", bytes("get"), bytes("GET")]) {
      assert.deepStrictEqual(CommandKeys.keys([name, "k"]), ["k"])
      assert.isTrue(CommandKeys.isReadOnly([name, "k"]))
    }
    assert.deepStrictEqual(CommandKeys.keys(["object", "encoding", "k"]), ["k"])
    assert.deepStrictEqual(CommandKeys.keys(["xread", "count", "1", "streams", "a", "b", "0", "0"]), ["a", "b"])
  })

  it("key arguments come back as passed (same bytes object, numbers as numbers)", () => {
    const key = bytes("binary-key")
    const [found] = CommandKeys.keys(["SET", key, "v"])
    assert.strictEqual(found, key)
    assert.strictEqual(CommandKeys.firstKey(["GET", 42]), 42)
    assert.strictEqual(CommandKeys.firstKeySlot(["GET", 42]), hashSlot("42"))
    assert.strictEqual(CommandKeys.firstKeySlot(["GET", key]), hashSlot("binary-key"))
  })

  it("unknown commands and unknown subcommands are keyless and flagless", () => {
    for (const command of [
      ["NOSUCH", "a", "b"],
      ["OBJECT", "NOSUCH", "k"],
      ["GRAPH.NOSUCH", "g"],
      [7, "x"]
    ]) {
      assert.deepStrictEqual(CommandKeys.keys(command), [])
      assert.strictEqual(CommandKeys.firstKey(command), undefined)
      assert.strictEqual(CommandKeys.firstKeySlot(command), undefined)
      assert.isFalse(CommandKeys.isReadOnly(command))
      assert.isFalse(CommandKeys.isBlocking(command))
      assert.isFalse(CommandKeys.isConnectionState(command))
      assert.isFalse(CommandKeys.isKnown(command))
    }
  })

  it("FalkorDB GRAPH.* commands", () => {
    const cases: ReadonlyArray<readonly [Command, ReadonlyArray<string>, boolean]> = [
      [["GRAPH.QUERY", "g", "MATCH (n) RETURN n", "--compact"], ["g"], false],
      [["GRAPH.RO_QUERY", "g", "MATCH (n) RETURN n", "--compact"], ["g"], true],
      [["GRAPH.EXPLAIN", "g", "MATCH (n) RETURN n"], ["g"], false],
      [["GRAPH.PROFILE", "g", "MATCH (n) RETURN n"], ["g"], false],
      [["GRAPH.DELETE", "g"], ["g"], false],
      [["GRAPH.COPY", "src", "dst"], ["src", "dst"], false],
      [["GRAPH.SLOWLOG", "g"], ["g"], true],
      [["GRAPH.SLOWLOG", "g", "RESET"], ["g"], false],
      [["GRAPH.CONSTRAINT", "CREATE", "g", "UNIQUE", "NODE", "L", "PROPERTIES", "1", "p"], ["g"], false],
      [["GRAPH.CONSTRAINT", "DROP", "g", "UNIQUE", "NODE", "L", "PROPERTIES", "1", "p"], ["g"], false],
      [["GRAPH.MEMORY", "USAGE", "g", "SAMPLES", "10"], ["g"], true],
      [["GRAPH.LIST"], [], true],
      [["GRAPH.INFO", "RunningQueries"], [], true],
      [["GRAPH.CONFIG", "GET", "TIMEOUT"], [], true],
      [["GRAPH.CONFIG", "SET", "TIMEOUT", "10"], [], false],
      [["GRAPH.UDF", "LIST"], [], true],
      [["GRAPH.UDF", "LOAD", "lib", "function f() {}"], [], false]
    ]
    for (const [command, expected, readOnly] of cases) {
      assert.deepStrictEqual(CommandKeys.keys(command), expected, command.join(" "))
      assert.strictEqual(CommandKeys.firstKey(command), expected[0], command.join(" "))
      assert.strictEqual(CommandKeys.isReadOnly(command), readOnly, command.join(" "))
      assert.isFalse(CommandKeys.isBlocking(command))
      assert.isFalse(CommandKeys.isConnectionState(command))
    }
  })

  it("blocking commands", () => {
    const blocking: ReadonlyArray<Command> = [
      ["BLPOP", "a", "0"],
      ["BRPOP", "a", "b", "1"],
      ["BLMOVE", "a", "b", "LEFT", "RIGHT", "0"],
      ["BRPOPLPUSH", "a", "b", "0"],
      ["BLMPOP", "0", "1", "a", "LEFT"],
      ["BZPOPMIN", "a", "0"],
      ["BZPOPMAX", "a", "0"],
      ["BZMPOP", "0", "1", "a", "MIN"],
      ["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
      ["xread", "count", "10", "block", "100", "streams", "s", "0"],
      ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"],
      ["WAIT", "1", "0"],
      ["WAITAOF", "1", "0", "0"]
    ]
    for (const command of blocking) assert.isTrue(CommandKeys.isBlocking(command), command.join(" "))
    const notBlocking: ReadonlyArray<Command> = [
      ["XREAD", "STREAMS", "s", "0"],
      ["XREAD", "COUNT", "1", "STREAMS", "BLOCK", "0"], // a stream named BLOCK
      ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
      ["LPOP", "a"],
      ["CLIENT", "PAUSE", "100"],
      ["SUBSCRIBE", "ch"],
      ["GET", "k"]
    ]
    for (const command of notBlocking) assert.isFalse(CommandKeys.isBlocking(command), command.join(" "))
    // `sharing` answers both questions with one lookup, and says what the two predicates say.
    for (const command of blocking) assert.strictEqual(CommandKeys.sharing(command), "blocking", command.join(" "))
    for (const command of notBlocking) {
      const expected = CommandKeys.isConnectionState(command) ? "connectionState" : "shared"
      assert.strictEqual(CommandKeys.sharing(command), expected, command.join(" "))
    }
    assert.strictEqual(CommandKeys.sharing(["SUBSCRIBE", "ch"]), "connectionState")
    assert.strictEqual(CommandKeys.sharing(["client", "tracking", "on"]), "connectionState")
    assert.strictEqual(CommandKeys.sharing(["GRAPH.QUERY", "g", "RETURN 1"]), "shared")
  })

  it("connection-state commands", () => {
    const state: ReadonlyArray<Command> = [
      ["MULTI"],
      ["EXEC"],
      ["DISCARD"],
      ["WATCH", "a", "b"],
      ["UNWATCH"],
      ["SUBSCRIBE", "a"],
      ["PSUBSCRIBE", "a*"],
      ["SSUBSCRIBE", "a"],
      ["UNSUBSCRIBE"],
      ["PUNSUBSCRIBE"],
      ["SUNSUBSCRIBE"],
      ["MONITOR"],
      ["SELECT", "1"],
      ["AUTH", "pw"],
      ["HELLO", "3"],
      ["RESET"],
      ["QUIT"],
      ["CLIENT", "REPLY", "OFF"],
      ["client", "tracking", "on"],
      ["CLIENT", "SETNAME", "x"],
      ["READONLY"]
    ]
    for (const command of state) assert.isTrue(CommandKeys.isConnectionState(command), command.join(" "))
    for (const command of [
      ["CLIENT", "PAUSE", "10"],
      ["CLIENT", "ID"],
      ["GET", "k"],
      ["PING"],
      ["PUBLISH", "c", "m"]
    ]) {
      assert.isFalse(CommandKeys.isConnectionState(command), command.join(" "))
    }
    // WATCH's keys still hash, so a key-routed caller can find the engine they live on.
    assert.deepStrictEqual(CommandKeys.keys(["WATCH", "a", "b"]), ["a", "b"])
  })

  it("read-only beyond the server's flags", () => {
    for (const command of [["PING"], ["ECHO", "x"], ["INFO"], ["CONFIG", "GET", "*"], ["CLIENT", "ID"], ["TIME"]]) {
      assert.isTrue(CommandKeys.isReadOnly(command), command.join(" "))
    }
    for (const command of [
      ["CONFIG", "SET", "a", "b"],
      ["EVAL", "return 1", "0"],
      ["PUBLISH", "c", "m"]
    ]) {
      assert.isFalse(CommandKeys.isReadOnly(command), command.join(" "))
    }
  })

  it("malformed movable-key commands yield only the keys that are there", () => {
    assert.deepStrictEqual(CommandKeys.keys(["EVAL", "s", "x", "a"]), [])
    assert.deepStrictEqual(CommandKeys.keys(["EVAL", "s", "5", "a", "b"]), ["a", "b"])
    assert.deepStrictEqual(CommandKeys.keys(["ZUNIONSTORE", "d", "nope", "a"]), ["d"])
    assert.deepStrictEqual(CommandKeys.keys(["XREAD", "STREAMS", "a", "b", "0"]), [])
    assert.deepStrictEqual(CommandKeys.keys(["GET"]), [])
    assert.deepStrictEqual(CommandKeys.keys(["BLPOP", "0"]), [])
    assert.strictEqual(CommandKeys.firstKey(["BLPOP", "0"]), undefined)
  })

  it("firstKey is the first of keys, for arbitrary arguments of every kind of finder", () => {
    const names = [
      "GET",
      "MSET",
      "BLPOP",
      "EVAL",
      "ZUNIONSTORE",
      "XREAD",
      "XREADGROUP",
      "SORT",
      "MIGRATE",
      "GEORADIUS",
      "OBJECT",
      "GRAPH.COPY",
      "GRAPH.CONSTRAINT",
      "BITOP"
    ]
    const word = fc.oneof(
      fc.constantFrom("0", "1", "2", "3", "", "STREAMS", "STORE", "KEYS", "AUTH", "BLOCK", "ENCODING", "CREATE"),
      fc.string({ maxLength: 4 })
    )
    fc.assert(
      fc.property(fc.constantFrom(...names), fc.array(word, { maxLength: 10 }), (name, args) => {
        const command = [name, ...args]
        const all = CommandKeys.keys(command)
        return CommandKeys.firstKey(command) === all[0]
      }),
      { numRuns: 2000 }
    )
  })
})

// ---------------------------------------------------------------------------------------------
// Against the server
// ---------------------------------------------------------------------------------------------

interface ServerCommand {
  /** `["object", "encoding"]` for a subcommand. */
  readonly path: ReadonlyArray<string>
  readonly arity: number
  readonly flags: ReadonlySet<string>
}

const str = (reply: Reply): string => {
  const s = replyToString(reply)
  if (s === undefined) throw new Error(`expected a string reply, got ${String(reply)}`)
  return s
}

const parseCommands = (reply: Reply, parent: ReadonlyArray<string> = []): Array<ServerCommand> => {
  const out: Array<ServerCommand> = []
  for (const row of reply as ReadonlyArray<ReadonlyArray<Reply>>) {
    const name = str(row[0]!)
    const path = parent.length === 0 ? [name] : [parent[0]!, name.split("|")[1]!]
    const subcommands = row[9] as ReadonlyArray<Reply> | undefined
    if (subcommands !== undefined && subcommands.length > 0) {
      out.push(...parseCommands(subcommands, path))
    } else {
      const flags = new Set((row[2] as ReadonlyArray<Reply>).map(str))
      out.push({ path, arity: Number(row[1]), flags })
    }
  }
  return out
}

/** The keys the server reports, or [] when it says the command has none. */
const serverKeys = (reply: Reply, command: Command): ReadonlyArray<string> => {
  if (reply instanceof ErrorReply) {
    if (/no key arguments/i.test(reply.message)) return []
    throw new Error(`COMMAND GETKEYS ${command.join(" ")}: ${reply.message}`)
  }
  return (reply as ReadonlyArray<Reply>).map(str)
}

// Commands whose keys move with their arguments: each is checked with real syntax below.
const movable: ReadonlyArray<Command> = [
  ["EVAL", "return 1", "0"],
  ["EVAL", "return 1", "1", "k1", "a1"],
  ["EVAL", "return 1", "3", "k1", "k2", "k3", "a1", "a2"],
  ["EVALSHA", "abc", "2", "k1", "k2", "a1"],
  ["EVAL_RO", "return 1", "1", "k1"],
  ["EVALSHA_RO", "abc", "1", "k1", "a1"],
  ["FCALL", "f", "2", "k1", "k2", "a1"],
  ["FCALL_RO", "f", "1", "k1"],
  ["ZUNIONSTORE", "dst", "2", "k1", "k2", "WEIGHTS", "1", "2"],
  ["ZINTERSTORE", "dst", "1", "k1"],
  ["ZDIFFSTORE", "dst", "3", "k1", "k2", "k3"],
  ["ZUNION", "2", "k1", "k2", "WITHSCORES"],
  ["ZINTER", "1", "k1"],
  ["ZDIFF", "2", "k1", "k2"],
  ["ZINTERCARD", "2", "k1", "k2", "LIMIT", "3"],
  ["SINTERCARD", "3", "k1", "k2", "k3"],
  ["LMPOP", "2", "k1", "k2", "LEFT", "COUNT", "2"],
  ["BLMPOP", "0", "2", "k1", "k2", "RIGHT"],
  ["ZMPOP", "1", "k1", "MIN"],
  ["BZMPOP", "1.5", "2", "k1", "k2", "MAX", "COUNT", "3"],
  ["XREAD", "STREAMS", "s1", "0"],
  ["XREAD", "COUNT", "5", "BLOCK", "10", "STREAMS", "s1", "s2", "0", "$"],
  ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s1", ">"],
  ["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "BLOCK", "0", "NOACK", "STREAMS", "s1", "s2", "s3", ">", ">", "0"],
  ["GEORADIUS", "k1", "1", "2", "3", "km"],
  ["GEORADIUS", "k1", "1", "2", "3", "km", "WITHDIST", "STORE", "k2"],
  ["GEORADIUS", "k1", "1", "2", "3", "km", "STOREDIST", "k2"],
  ["GEORADIUSBYMEMBER", "k1", "m", "3", "km", "STORE", "k2"],
  ["GEORADIUSBYMEMBER", "k1", "m", "3", "km", "COUNT", "2"],
  ["SORT", "k1"],
  ["SORT", "k1", "BY", "w_*", "LIMIT", "0", "10", "GET", "o_*", "GET", "#", "DESC", "ALPHA", "STORE", "k2"],
  ["SORT", "k1", "STORE", "k2"],
  ["SORT_RO", "k1", "BY", "w_*", "GET", "#"],
  ["MIGRATE", "127.0.0.1", "1", "k1", "0", "1000"],
  ["MIGRATE", "127.0.0.1", "1", "k1", "0", "1000", "COPY", "REPLACE"],
  ["MIGRATE", "127.0.0.1", "1", "", "0", "1000", "KEYS", "k1", "k2", "k3"],
  ["MIGRATE", "127.0.0.1", "1", "", "0", "1000", "COPY", "AUTH", "KEYS", "KEYS", "k1"],
  ["MIGRATE", "127.0.0.1", "1", "", "0", "1000", "AUTH2", "u", "KEYS", "KEYS", "k1"]
]

layer(Embedded.layer(), { timeout: 60_000, excludeTestServices: true })("CommandKeys (against redis-server)", (it) => {
  const connect = Effect.gen(function* () {
    const server = yield* Embedded.EmbeddedServer
    return yield* RedisConnection.makeSingle({ url: server.url, protocol: 2 })
  })

  it.effect("every command the server knows is in the table, with its key positions", () =>
    Effect.gen(function* () {
      const redis = yield* connect
      const commands = parseCommands(yield* redis.execute(["COMMAND"]))
      assert.isAbove(commands.length, 300)
      const samples: Array<Command> = []
      for (const { arity, flags, path } of commands) {
        assert.isTrue(CommandKeys.isKnown(path), `not in the table: ${path.join(" ")}`)
        if (flags.has("movablekeys")) continue
        // Fixed-position keys: any filler satisfies the server; vary the length to exercise ranges.
        const minimum = Math.abs(arity)
        const lengths = arity < 0 ? [minimum, minimum + 1, minimum + 2, minimum + 3] : [minimum]
        for (const length of lengths) {
          // COMMAND GETKEYS needs an argument after the name; a bare name has no key anyway.
          if (length < 2) {
            assert.deepStrictEqual(CommandKeys.keys(path), [], path.join(" "))
            continue
          }
          const args = Array.from({ length: length - path.length }, (_, i) => `a${i}`)
          // redis 7.0 answers "Invalid arguments" for a PFMERGE without sources (valid since 7.2).
          if (path[0] === "pfmerge" && length === 2) {
            assert.deepStrictEqual(CommandKeys.keys(["pfmerge", "a0"]), ["a0"])
            continue
          }
          samples.push([...path, ...args])
        }
      }
      samples.push(...movable)
      const replies = yield* redis.pipeline(samples.map((command) => ["COMMAND", "GETKEYS", ...command]))
      let keyed = 0
      samples.forEach((command, i) => {
        const expected = serverKeys(replies[i]!, command)
        if (expected.length > 0) keyed++
        assert.deepStrictEqual(CommandKeys.keys(command), expected, command.join(" "))
        assert.strictEqual(CommandKeys.firstKey(command), expected[0], command.join(" "))
      })
      // The comparison is not vacuous: most samples do have keys.
      assert.isAbove(keyed, 300)
    })
  )

  it.effect("read-only and blocking agree with the server's flags", () =>
    Effect.gen(function* () {
      const redis = yield* connect
      const commands = parseCommands(yield* redis.execute(["COMMAND"]))
      let checked = 0
      for (const { flags, path } of commands) {
        const name = path.join(" ")
        // XREAD and XREADGROUP carry the `blocking` flag but only block with BLOCK.
        const command =
          path[0] === "xread"
            ? ["xread", "BLOCK", "0", "STREAMS", "s", "$"]
            : path[0] === "xreadgroup"
              ? ["xreadgroup", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"]
              : path
        if (flags.has("readonly")) assert.isTrue(CommandKeys.isReadOnly(command), `${name} is read-only`)
        if (flags.has("write")) assert.isFalse(CommandKeys.isReadOnly(command), `${name} writes`)
        // WAIT waits for replicas without the server's `blocking` flag; it is blocking here too.
        const blocking = flags.has("blocking") || path[0] === "wait"
        assert.strictEqual(CommandKeys.isBlocking(command), blocking, `${name} blocking`)
        if (flags.has("pubsub") && /subscribe$/.test(path[0]!)) {
          assert.isTrue(CommandKeys.isConnectionState(command), `${name} changes connection state`)
        }
        if (flags.has("readonly") || flags.has("write") || flags.has("blocking")) checked++
      }
      assert.isAbove(checked, 150)
    })
  )
})
