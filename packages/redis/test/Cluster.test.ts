/**
 * Redis Cluster on real processes: three primaries with one replica each on loopback
 * (`--cluster-enabled yes`, `redis-cli --cluster create … --cluster-replicas 1`).
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import { ErrorReply, MapReply, type Reply, replyToString } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"
import * as CommandKeys from "../src/CommandKeys.ts"
import * as RedisConnection from "../src/RedisConnection.ts"
import { hashSlot } from "../src/internal/HashSlot.ts"
import * as ClusterInternal from "../src/internal/Cluster.ts"
import { recent } from "../src/internal/ReplyStream.ts"
import type { RedisError } from "../src/RedisError.ts"
import * as FakeServer from "./fixtures/FakeServer.ts"
import * as Ledger from "./fixtures/Ledger.ts"
import { redisCli } from "./fixtures/RedisCli.ts"
import { until } from "./fixtures/Until.ts"

const text = (reply: Reply): string => replyToString(reply) ?? String(reply)

const eventually = <E, R>(what: string, check: Effect.Effect<boolean, E, R>, attempts = 400) =>
  Effect.gen(function* () {
    for (let i = 0; i < attempts; i++) {
      if (yield* Effect.orElseSucceed(check, () => false)) return
      yield* Effect.sleep(50)
    }
    assert.fail(`timed out waiting for ${what}`)
  })

const failureOf = (exit: Exit.Exit<unknown, RedisError>): RedisError => {
  if (Exit.isSuccess(exit)) throw new Error("the call must fail")
  const reason = exit.cause.reasons[0]
  if (reason?._tag !== "Fail") throw new Error(`a typed failure, not ${reason?._tag}`)
  return reason.error
}

/** Three primaries, each with `replicas` replicas. */
const clusterOf = (replicas: 0 | 1) =>
  Effect.gen(function* () {
    const servers = yield* Effect.forEach(
      Array.from({ length: 3 * (1 + replicas) }, (_, i) => i),
      () =>
        Embedded.make({
          cluster: true,
          args: [
            "--cluster-node-timeout",
            "1000",
            "--cluster-replica-validity-factor",
            "0",
            // A replica's first sync waits 5 s for others to join by default: until then it holds
            // nothing, and a failover would lose everything (seen as "the promoted replica holds nothing").
            "--repl-diskless-sync-delay",
            "0"
          ]
        })
    )
    yield* redisCli([
      "--cluster",
      "create",
      ...servers.map((s) => `127.0.0.1:${s.port}`),
      "--cluster-replicas",
      String(replicas),
      "--cluster-yes"
    ])
    const admins = yield* Effect.forEach(servers, (s) => RedisConnection.makeSingle({ port: s.port }))
    yield* eventually(
      "the cluster to be ok on every node",
      Effect.gen(function* () {
        for (const admin of admins) {
          const info = text(yield* admin.execute(["CLUSTER", "INFO"]))
          if (!info.includes("cluster_state:ok")) return false
        }
        return true
      })
    )
    yield* eventually(
      "every replica to finish its first sync",
      Effect.gen(function* () {
        let synced = 0
        for (const admin of admins) {
          const info = text(yield* admin.execute(["INFO", "replication"]))
          if (info.includes("role:slave") && info.includes("master_link_status:up")) synced++
        }
        return synced === 3 * replicas
      })
    )
    return { servers, admins }
  })

const cluster = clusterOf(1)

/** `INFO` fields of one server, as numbers: `cmdstat_get.calls`, `total_error_replies` … */
const stats = (admin: RedisConnection.RedisConnection["Service"]) =>
  Effect.map(admin.execute(["INFO", "all"]), (reply) => {
    const out = new Map<string, number>()
    for (const line of text(reply).split(/\r?\n/)) {
      const colon = line.indexOf(":")
      if (colon < 0) continue
      const name = line.slice(0, colon)
      const value = line.slice(colon + 1)
      if (/^-?\d+$/.test(value)) out.set(name, Number(value))
      for (const part of value.split(",")) {
        const [field, number] = part.split("=")
        if (field !== undefined && number !== undefined && /^\d+$/.test(number))
          out.set(`${name}.${field}`, Number(number))
      }
    }
    return out
  })

const bulk = (value: string) => `$${Buffer.byteLength(value)}\r\n${value}\r\n`

describe("cluster", { timeout: 120_000 }, () => {
  it("slot map: CLUSTER SHARDS read in RESP2 and RESP3 form; failed primaries and replicas not online left out", () => {
    const asked = { host: "10.0.0.9", port: 7000 }
    const node = (fields: Record<string, string | number>): ReadonlyArray<Reply> =>
      Object.entries(fields).flatMap(([k, v]) => [k, v])
    const shards: Reply = [
      [
        "slots",
        [0, 99, 200, 299],
        "nodes",
        [
          node({ id: "a", port: 7001, ip: "10.0.0.1", endpoint: "10.0.0.1", role: "master", health: "fail" }),
          node({ id: "b", port: 7002, ip: "10.0.0.2", endpoint: "10.0.0.2", role: "master", health: "online" }),
          node({ id: "c", port: 7003, ip: "10.0.0.3", endpoint: "10.0.0.3", role: "replica", health: "online" }),
          node({ id: "d", port: 7004, ip: "10.0.0.4", endpoint: "10.0.0.4", role: "replica", health: "loading" })
        ]
      ],
      // RESP3: maps; a node that never met another has an empty address: the node asked.
      new MapReply([
        "slots",
        [100, 199],
        "nodes",
        [new MapReply(node({ id: "e", port: 7005, ip: "", endpoint: "", role: "master", health: "online" }))]
      ]),
      // A shard without slots (a node being added) serves nothing.
      ["slots", [], "nodes", [node({ id: "f", port: 7006, ip: "10.0.0.6", role: "master", health: "online" })]]
    ]
    const map = ClusterInternal.parseShards(shards, asked)
    if (typeof map === "string") return assert.fail(map)
    assert.deepStrictEqual(map[0], {
      primary: { host: "10.0.0.2", port: 7002 },
      replicas: [{ host: "10.0.0.3", port: 7003 }]
    })
    assert.strictEqual(map[299], map[0])
    assert.deepStrictEqual(map[150], { primary: { host: "10.0.0.9", port: 7005 }, replicas: [] })
    assert.isUndefined(map[300])
    assert.isString(ClusterInternal.parseShards("OK", asked))
    // A node with a plain and a TLS port: the TLS port for a TLS client, the plain one otherwise.
    const both: Reply = [
      [
        "slots",
        [0, 16383],
        "nodes",
        [node({ id: "t", port: 7001, "tls-port": 8001, ip: "10.0.0.1", role: "master", health: "online" })]
      ]
    ]
    const overTls = ClusterInternal.parseShards(both, asked, true)
    const plain = ClusterInternal.parseShards(both, asked)
    if (typeof overTls === "string" || typeof plain === "string") return assert.fail("parsed")
    assert.strictEqual(overTls[0]?.primary.port, 8001)
    assert.strictEqual(plain[0]?.primary.port, 7001)
    // CLUSTER SLOTS: primary first, then replicas.
    const slots = ClusterInternal.parseSlots(
      [
        [0, 8191, ["10.0.0.1", 7001, "a"], ["10.0.0.2", 7002, "b"]],
        [8192, 16383, ["", 7003, "c"]]
      ],
      asked
    )
    if (typeof slots === "string") return assert.fail(slots)
    assert.deepStrictEqual(slots[8191], {
      primary: { host: "10.0.0.1", port: 7001 },
      replicas: [{ host: "10.0.0.2", port: 7002 }]
    })
    assert.deepStrictEqual(slots[16383], { primary: { host: "10.0.0.9", port: 7003 }, replicas: [] })
  })

  it.live("a node that does not know CLUSTER SHARDS (before Redis 7): the map comes from CLUSTER SLOTS", () =>
    Effect.gen(function* () {
      // A scripted seed that refuses SHARDS and names a real server as the owner of every slot.
      const owner = yield* Embedded.make()
      const asked = { shards: 0, slots: 0 }
      const seed = yield* FakeServer.make((command) => {
        const name = command.join(" ").toUpperCase()
        if (name === "PING") return "+PONG\r\n"
        if (name === "CLUSTER SHARDS") {
          asked.shards++
          return "-ERR unknown subcommand 'SHARDS'. Try CLUSTER HELP.\r\n"
        }
        if (name === "CLUSTER SLOTS") {
          asked.slots++
          return `*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n${bulk("127.0.0.1")}:${owner.port}\r\n`
        }
        return "-ERR the scripted seed serves no data\r\n"
      })
      const redis = yield* RedisConnection.makeFromOptions({
        strategy: "single",
        cluster: { nodes: [`127.0.0.1:${seed.port}`] }
      })
      assert.deepStrictEqual(asked, { shards: 1, slots: 1 })
      assert.strictEqual(yield* redis.execute(["SET", "fallback", "1"]), "OK")
      const direct = yield* RedisConnection.makeSingle({ port: owner.port })
      assert.strictEqual(text(yield* direct.execute(["GET", "fallback"])), "1")
    })
  )

  it.live(
    "keys over all slots through every strategy; pipelines across nodes; cross-slot refused; GRAPH.* by name",
    () =>
      Effect.gen(function* () {
        const { servers, admins } = yield* cluster
        const seed = `127.0.0.1:${servers[0]!.port}`
        for (const options of [
          { strategy: "single" },
          { strategy: "multiplexed", connections: 2, routing: "spread" },
          { strategy: "pooled", size: 2 }
        ] as const) {
          const redis = yield* RedisConnection.makeFromOptions({ ...options, cluster: { nodes: [seed] } })
          const label = options.strategy
          yield* Effect.forEach(
            Array.from({ length: 300 }, (_, i) => i),
            (i) => redis.execute(["SET", `${label}:key:${i}`, String(i)]),
            { concurrency: 32 }
          )
          const values = yield* Effect.forEach(
            Array.from({ length: 300 }, (_, i) => i),
            (i) => redis.execute(["GET", `${label}:key:${i}`])
          )
          assert.deepStrictEqual(
            values.map(text),
            Array.from({ length: 300 }, (_, i) => String(i))
          )
          // Every primary holds some of them.
          let holders = 0
          for (const admin of admins) {
            const role = text(yield* admin.execute(["ROLE"]).pipe(Effect.map((r) => (r as ReadonlyArray<Reply>)[0]!)))
            if (role === "master" && Number(yield* admin.execute(["DBSIZE"])) > 0) holders++
          }
          assert.strictEqual(holders, 3)
          // A pipeline over several nodes comes back in order.
          const commands = Array.from({ length: 40 }, (_, i) => ["GET", `${label}:key:${i}`] as const)
          const replies = yield* redis.pipeline(commands)
          assert.deepStrictEqual(
            replies.map(text),
            Array.from({ length: 40 }, (_, i) => String(i))
          )
          // executeAll: each command to its slot's node, the replies back in command order.
          const all = yield* redis.executeAll(commands)
          assert.deepStrictEqual(
            all.map(text),
            Array.from({ length: 40 }, (_, i) => String(i))
          )
          const results = yield* redis.executeAll(
            [
              ["GET", `${label}:key:1`],
              ["HGET", `${label}:key:2`, "field"],
              ["GET", `${label}:key:3`]
            ],
            { mode: "result" }
          )
          assert.deepStrictEqual(
            results.map((result) => (result._tag === "Success" ? text(result.success) : result.failure.reason._tag)),
            ["1", "Reply", "3"]
          )
          // A cross-slot command refuses the whole batch before anything is sent.
          const crossAll = failureOf(
            yield* Effect.exit(
              redis.executeAll([
                ["SET", `${label}:never`, "1"],
                ["MSET", "a", "1", "b", "2"]
              ])
            )
          )
          assert.strictEqual(crossAll.reason._tag, "CrossSlot")
          assert.isNull(yield* redis.execute(["GET", `${label}:never`]))
          // Cross-slot: refused before sending; hash tags keep keys together.
          const cross = failureOf(yield* Effect.exit(redis.execute(["MSET", "a", "1", "b", "2"])))
          assert.strictEqual(cross.reason._tag, "CrossSlot")
          assert.isFalse(cross.written)
          assert.strictEqual(yield* redis.execute(["MSET", `{${label}}a`, "1", `{${label}}b`, "2"]), "OK")
        }
        // GRAPH.* commands route by the graph name: the slot the server computes for it.
        for (const name of ["movies", "{tenant1}social", "g:42"]) {
          const expected = Number(yield* admins[0]!.execute(["CLUSTER", "KEYSLOT", name]))
          assert.strictEqual(CommandKeys.firstKeySlot(["GRAPH.QUERY", name, "RETURN 1"]), expected)
          assert.strictEqual(CommandKeys.firstKeySlot(["GRAPH.RO_QUERY", name, "RETURN 1"]), expected)
        }
        assert.notInstanceOf(yield* admins[0]!.execute(["PING"]), ErrorReply)

        // --- a slot migrated under load: ASK while it migrates, MOVED after
        const redis = yield* RedisConnection.makeFromOptions({
          strategy: "multiplexed",
          connections: 2,
          routing: "spread",
          cluster: { nodes: [seed] }
        })
        const key = "{migrating}k"
        const slot = Number(yield* admins[0]!.execute(["CLUSTER", "KEYSLOT", key]))
        const owners = (yield* admins[0]!.execute(["CLUSTER", "SLOTS"])) as ReadonlyArray<ReadonlyArray<Reply>>
        const range = owners.find((r) => Number(r[0]) <= slot && slot <= Number(r[1]))!
        const sourcePort = Number((range[2] as ReadonlyArray<Reply>)[1])
        const primaryPorts = owners.map((r) => Number((r[2] as ReadonlyArray<Reply>)[1]))
        const targetPort = primaryPorts.find((p) => p !== sourcePort)!
        const adminOf = (port: number) => admins[servers.findIndex((s) => s.port === port)]!
        const idOf = (port: number) => Effect.map(adminOf(port).execute(["CLUSTER", "MYID"]), text)
        const sourceId = yield* idOf(sourcePort)
        const targetId = yield* idOf(targetPort)
        yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          (i) => redis.execute(["SET", `{migrating}${i}`, String(i)])
        )
        assert.strictEqual(yield* redis.execute(["SET", key, "before"]), "OK")
        let stop = false
        let reads = 0
        const load = yield* Effect.forkChild(
          Effect.forEach(
            Array.from({ length: 8 }, (_, f) => f),
            (f) =>
              Effect.gen(function* () {
                while (!stop) {
                  const i = (f * 7 + reads) % 20
                  const value = yield* redis.execute(["GET", `{migrating}${i}`])
                  assert.strictEqual(text(value), String(i))
                  reads++
                  yield* Effect.sleep(2)
                }
              }),
            { concurrency: "unbounded" }
          ),
          { startImmediately: true }
        )
        yield* adminOf(targetPort).execute(["CLUSTER", "SETSLOT", slot, "IMPORTING", sourceId])
        yield* adminOf(sourcePort).execute(["CLUSTER", "SETSLOT", slot, "MIGRATING", targetId])
        yield* adminOf(sourcePort).execute(["MIGRATE", "127.0.0.1", targetPort, "", 0, 5000, "KEYS", key])
        // The key has left the source: the source answers ASK, the client asks the target.
        assert.strictEqual(text(yield* redis.execute(["GET", key])), "before")
        const rest = Array.from({ length: 20 }, (_, i) => `{migrating}${i}`)
        yield* adminOf(sourcePort).execute(["MIGRATE", "127.0.0.1", targetPort, "", 0, 5000, "KEYS", ...rest])
        for (const admin of admins) yield* Effect.ignore(admin.execute(["CLUSTER", "SETSLOT", slot, "NODE", targetId]))
        // The slot is the target's now: the source answers MOVED, the client re-reads the map.
        assert.strictEqual(yield* redis.execute(["SET", key, "after"]), "OK")
        assert.strictEqual(text(yield* adminOf(targetPort).execute(["GET", key])), "after")
        yield* Effect.sleep(200)
        stop = true
        yield* Fiber.join(load)
        assert.isAbove(reads, 0)
        console.log(
          `cluster: slot ${slot} moved from :${sourcePort} to :${targetPort} under load; ${reads} reads, all correct`
        )

        const portOf = (address: Reply) => Number((address as ReadonlyArray<Reply>)[1])
        const slotMap = Effect.map(
          adminOf(sourcePort).execute(["CLUSTER", "SLOTS"]),
          (reply) => reply as ReadonlyArray<ReadonlyArray<Reply>>
        )
        const ownerOf = (wanted: number, map: ReadonlyArray<ReadonlyArray<Reply>>) => {
          const range = map.find((r) => Number(r[0]) <= wanted && wanted <= Number(r[1]))
          return range === undefined ? undefined : { primary: portOf(range[2]!), replicas: range.slice(3).map(portOf) }
        }
        const primaries = [...new Set((yield* slotMap).map((r) => portOf(r[2]!)))]
        const replicaPorts = servers.map((s) => s.port).filter((p) => !primaries.includes(p))
        const sumOf = (ports: ReadonlyArray<number>, field: string) =>
          Effect.map(
            Effect.forEach(ports, (port) => stats(adminOf(port))),
            (all) => all.reduce((total, m) => total + (m.get(field) ?? 0), 0)
          )

        // --- many MOVED at once: one map refresh (CLUSTER SHARDS) for all of them
        const storm = yield* RedisConnection.makeFromOptions({
          strategy: "multiplexed",
          connections: 2,
          routing: "spread",
          cluster: { nodes: [seed] }
        })
        // Two empty slots of one primary, found by hash tag, handed to another primary.
        const tags: Array<string> = []
        const from = primaries[0]!
        const to = primaries[1]!
        const before = yield* slotMap
        for (let i = 0; tags.length < 2; i++) {
          const tag = `{storm${i}}`
          const tagSlot = hashSlot(tag)
          if (
            ownerOf(tagSlot, before)?.primary === from &&
            !tags.some((t) => hashSlot(t) === tagSlot) &&
            tagSlot !== hashSlot("{ledger}")
          ) {
            tags.push(tag)
          }
        }
        assert.isNull(yield* storm.execute(["GET", `${tags[0]}warm`]))
        const toId = yield* idOf(to)
        const fromId = yield* idOf(from)
        for (const tag of tags) {
          // The documented order: the importing node claims the slot with a new epoch first, so
          // gossip from the old owner cannot take it back.
          yield* adminOf(to).execute(["CLUSTER", "SETSLOT", hashSlot(tag), "IMPORTING", fromId])
          yield* adminOf(from).execute(["CLUSTER", "SETSLOT", hashSlot(tag), "MIGRATING", toId])
          for (const port of [to, from, ...primaries.filter((p) => p !== to && p !== from)]) {
            yield* adminOf(port).execute(["CLUSTER", "SETSLOT", hashSlot(tag), "NODE", toId])
          }
        }
        const shardsBefore = yield* sumOf(
          servers.map((s) => s.port),
          "cmdstat_cluster|shards.calls"
        )
        const stormReplies = yield* Effect.forEach(
          Array.from({ length: 64 }, (_, i) => i),
          (i) => storm.execute(["GET", `${tags[i % 2]}k${i}`]),
          { concurrency: "unbounded" }
        )
        const shardsAfter = yield* sumOf(
          servers.map((s) => s.port),
          "cmdstat_cluster|shards.calls"
        )
        assert.deepStrictEqual(
          stormReplies,
          Array.from({ length: 64 }, () => null)
        )
        assert.strictEqual(shardsAfter - shardsBefore, 1, "64 redirections, one CLUSTER SHARDS")
        // The moved slots' primary changed; the others' did not.
        assert.strictEqual(storm.info.primaryEpoch!(`${tags[0]}x`), 1)
        assert.strictEqual(storm.info.primaryEpoch!("{ledger}"), 0)
        console.log(`cluster: 64 commands redirected (MOVED) at once, ${shardsAfter - shardsBefore} map refresh`)

        // --- reads from replicas (READONLY in their handshake); writes on primaries
        const readers = yield* RedisConnection.makeFromOptions({
          strategy: "multiplexed",
          connections: 2,
          routing: "spread",
          readPreference: "replica",
          cluster: { nodes: [seed] }
        })
        const errorsBefore = yield* sumOf(replicaPorts, "total_error_replies")
        const setsBefore = yield* sumOf(primaries, "cmdstat_set.calls")
        yield* Effect.forEach(
          Array.from({ length: 60 }, (_, i) => i),
          (i) => readers.execute(["SET", `replica:${i}`, String(i)]),
          { concurrency: 16 }
        )
        assert.strictEqual((yield* sumOf(primaries, "cmdstat_set.calls")) - setsBefore, 60, "writes run on primaries")
        assert.strictEqual(yield* sumOf(replicaPorts, "total_error_replies"), errorsBefore, "no write tried a replica")
        yield* eventually(
          "the writes to reach the replicas",
          Effect.map(readers.execute(["GET", "replica:59"]), (v) => v !== null && text(v) === "59")
        )
        yield* eventually(
          "every write on the replicas",
          Effect.map(
            Effect.forEach(
              Array.from({ length: 60 }, (_, i) => i),
              (i) => readers.execute(["GET", `replica:${i}`])
            ),
            (values) => values.every((v, i) => v !== null && text(v) === String(i))
          )
        )
        const getsOn = Effect.all([sumOf(primaries, "cmdstat_get.calls"), sumOf(replicaPorts, "cmdstat_get.calls")])
        const [primaryGets, replicaGets] = yield* getsOn
        const values = yield* Effect.forEach(
          Array.from({ length: 60 }, (_, i) => i),
          (i) => readers.execute(["GET", `replica:${i}`]),
          { concurrency: 16 }
        )
        assert.deepStrictEqual(
          values.map(text),
          Array.from({ length: 60 }, (_, i) => String(i))
        )
        const pipelined = yield* readers.pipeline(Array.from({ length: 20 }, (_, i) => ["GET", `replica:${i}`]))
        assert.deepStrictEqual(
          pipelined.map(text),
          Array.from({ length: 20 }, (_, i) => String(i))
        )
        // Per call: this read asks for the primary.
        assert.strictEqual(text(yield* readers.execute(["GET", "replica:0"], { readPreference: "primary" })), "0")
        const [primaryGetsAfter, replicaGetsAfter] = yield* getsOn
        assert.deepStrictEqual(
          [primaryGetsAfter - primaryGets, replicaGetsAfter - replicaGets],
          [1, 80],
          "reads on replicas (one asked for the primary)"
        )
        console.log(`cluster: 80 reads served by replicas :${replicaPorts.join(", :")}, 60 writes by primaries`)

        // --- a primary killed under a burst of writes: its replica is promoted, the ledger holds
        const ledgerSlot = hashSlot("{ledger}")
        const victimPort = ownerOf(ledgerSlot, yield* slotMap)!.primary
        const victim = servers.find((s) => s.port === victimPort)!
        const writers = {
          plain: yield* RedisConnection.makeFromOptions({
            strategy: "multiplexed",
            connections: 2,
            routing: "spread",
            commandTimeout: "2 seconds",
            cluster: { nodes: [seed] }
          }),
          // The control: each transaction followed by WAIT 1 on its connection.
          waiting: yield* RedisConnection.makeFromOptions({
            strategy: "pooled",
            size: 8,
            commandTimeout: "2 seconds",
            cluster: { nodes: [seed] }
          })
        }
        const prefer = yield* RedisConnection.makeFromOptions({
          strategy: "single",
          readPreference: "preferReplica",
          cluster: { nodes: [seed] }
        })
        let stopped = false
        let phase = 0
        const running = yield* Effect.forkChild(
          Effect.all(
            [
              Ledger.burst(
                writers.plain,
                { counter: "{ledger}plain", ids: "{ledger}plain:ids" },
                8,
                () => stopped,
                () => phase
              ),
              Ledger.burst(
                writers.waiting,
                { counter: "{ledger}waiting", ids: "{ledger}waiting:ids" },
                8,
                () => stopped,
                () => phase,
                { replicas: 1, millis: 100 }
              )
            ],
            { concurrency: "unbounded" }
          ),
          { startImmediately: true }
        )
        yield* Effect.sleep(300)
        phase = 1
        yield* victim.kill
        yield* eventually(
          "a replica to be promoted",
          Effect.map(slotMap, (map) => {
            const owner = ownerOf(ledgerSlot, map)?.primary
            return owner !== undefined && owner !== victimPort
          }),
          600
        )
        const promoted = ownerOf(ledgerSlot, yield* slotMap)!.primary
        // Writes through the clients land on the promoted node.
        for (const client of Object.values(writers)) {
          yield* eventually(
            "the client to write to the promoted node",
            Effect.map(client.execute(["SET", "{ledger}probe", "promoted"], { timeout: 500 }), (r) => text(r) === "OK"),
            600
          )
        }
        assert.strictEqual(text(yield* adminOf(promoted).execute(["GET", "{ledger}probe"])), "promoted")
        yield* Effect.sleep(300)
        stopped = true
        const [plainWrites, waitingWrites] = yield* Fiber.join(running)
        for (const [label, writes] of [
          ["plain", plainWrites],
          ["waiting", waitingWrites]
        ] as const) {
          const value = yield* adminOf(promoted).execute(["GET", `{ledger}${label}`])
          const held = Ledger.members(yield* adminOf(promoted).execute(["SMEMBERS", `{ledger}${label}:ids`]), text)
          Ledger.check(`cluster ${label}`, writes, value === null ? 0 : Number(text(value)), held, 2)
        }
        console.log(`cluster: primary :${victimPort} killed, replica :${promoted} promoted, the clients write there`)

        // The promoted primary has no replica: preferReplica reads from it, "replica" says none is there.
        assert.strictEqual(text(yield* prefer.execute(["GET", "{ledger}probe"])), "promoted")
        const replicaOnly = yield* RedisConnection.makeFromOptions({
          strategy: "single",
          readPreference: "replica",
          // The first seed is dead: the next one answers.
          cluster: { nodes: [victimPort, promoted].map((port) => `127.0.0.1:${port}`) }
        })
        const none = failureOf(yield* Effect.exit(replicaOnly.execute(["GET", "{ledger}probe"])))
        assert.strictEqual(none.reason._tag, "Offline")
        assert.include(none.message, `slot ${ledgerSlot}`)
      })
  )
})

/** The wire size of an array reply of bulk strings, after its first line (`*<n>\r\n`). */
const bulkArrayBody = (values: ReadonlyArray<string>) => values.reduce((size, v) => size + bulk(v).length, 0)

describe("cluster: streamed and folded replies and submitted commands follow redirections", {
  timeout: 120_000
}, () => {
  it.live(
    "MOVED and ASK followed by executeStreamed (rows handed over while the reply is read), executeFolded and submit",
    () =>
      Effect.gen(function* () {
        const { servers, admins } = yield* clusterOf(0)
        const seed = `127.0.0.1:${servers[0]!.port}`
        const adminOf = (port: number) => admins[servers.findIndex((s) => s.port === port)]!
        const idOf = (port: number) => Effect.map(adminOf(port).execute(["CLUSTER", "MYID"]), text)
        const ports = servers.map((s) => s.port)
        const ownerOf = (slot: number) =>
          Effect.map(admins[0]!.execute(["CLUSTER", "SLOTS"]), (reply) => {
            const range = (reply as ReadonlyArray<ReadonlyArray<Reply>>).find(
              (r) => Number(r[0]) <= slot && slot <= Number(r[1])
            )!
            return Number((range[2] as ReadonlyArray<Reply>)[1])
          })
        /** Starts moving `tag`'s slot to another primary: IMPORTING / MIGRATING, then its keys go. */
        const beginMove = (tag: string, keys: ReadonlyArray<string>) =>
          Effect.gen(function* () {
            const slot = hashSlot(tag)
            const from = yield* ownerOf(slot)
            const to = ports.find((p) => p !== from)!
            yield* adminOf(to).execute(["CLUSTER", "SETSLOT", slot, "IMPORTING", yield* idOf(from)])
            yield* adminOf(from).execute(["CLUSTER", "SETSLOT", slot, "MIGRATING", yield* idOf(to)])
            if (keys.length > 0) {
              yield* adminOf(from).execute(["MIGRATE", "127.0.0.1", to, "", 0, 5000, "KEYS", ...keys])
            }
            return { slot, from, to }
          })
        /** Ends the move: every primary names the new owner (the old one answers MOVED from now on). */
        const endMove = (move: { slot: number; to: number }) =>
          Effect.gen(function* () {
            const toId = yield* idOf(move.to)
            for (const port of [move.to, ...ports.filter((p) => p !== move.to)]) {
              yield* adminOf(port).execute(["CLUSTER", "SETSLOT", move.slot, "NODE", toId])
            }
          })
        const stat = (port: number, field: string) => Effect.map(stats(adminOf(port)), (m) => m.get(field) ?? 0)
        /** An effect giving how much an `INFO` field of `port` has grown since now. */
        const since = (port: number, field: string) =>
          Effect.map(stat(port, field), (before) => Effect.map(stat(port, field), (after) => after - before))

        const rows = 20_000
        const values = Array.from({ length: rows }, (_, i) => `row-${i}-${"x".repeat(40)}`)
        const fill = (key: string) =>
          Effect.gen(function* () {
            const owner = adminOf(yield* ownerOf(hashSlot(key)))
            for (let i = 0; i < rows; i += 1000) yield* owner.execute(["RPUSH", key, ...values.slice(i, i + 1000)])
          })

        /**
         * Streams LRANGE of `key` with a consumer that stops after the first chunk until reading
         * has paused: the first rows are in hand while most of the reply is still unread. Then
         * reads the rest and checks every row, in order.
         */
        const streamedRows = (redis: RedisConnection.RedisConnection["Service"], key: string) =>
          Effect.scoped(
            Effect.gen(function* () {
              const pull = yield* Stream.toPull(
                RedisConnection.executeStreamed(redis, ["LRANGE", key, "0", "-1"], { depth: 1, highWaterMark: 16384 })
              )
              const first = yield* pull
              assert.deepStrictEqual(first[0], { _tag: "Open", depth: 0, length: rows })
              const stream = recent[recent.length - 1]!
              yield* until(
                Effect.sync(() => stream.pausing),
                "reading paused for the lagging consumer"
              )
              const readWhenPaused = stream.received
              let got = first
                .filter((part) => part._tag === "Value")
                .map((part) => text((part as { value: Reply }).value))
              const inHandWhenPaused = got.length
              for (;;) {
                const exit = yield* Effect.exit(pull)
                if (Exit.isFailure(exit)) {
                  assert.isTrue(Pull.isDoneCause(exit.cause), "ended, not failed")
                  break
                }
                for (const part of exit.value) if (part._tag === "Value") got.push(text(part.value))
              }
              assert.deepStrictEqual(got, values)
              assert.strictEqual(stream.received, bulkArrayBody(values))
              got = []
              return { inHandWhenPaused, readWhenPaused, total: bulkArrayBody(values) }
            })
          )

        for (const options of [
          { strategy: "multiplexed", connections: 1 },
          { strategy: "pooled", size: 2 }
        ] as const) {
          const label = options.strategy
          const redis = yield* RedisConnection.makeFromOptions({ ...options, cluster: { nodes: [seed] } })

          // --- MOVED: the slot moved after the client read the map; the stream runs on the new owner
          const movedKey = `{moved-${label}}list`
          yield* fill(movedKey)
          assert.strictEqual(Number(yield* redis.execute(["LLEN", movedKey])), rows)
          const move = yield* beginMove(movedKey, [movedKey])
          yield* endMove(move)
          const movedCount = yield* since(move.from, "errorstat_MOVED.count")
          const ranges = yield* since(move.to, "cmdstat_lrange.calls")
          const moved = yield* streamedRows(redis, movedKey)
          assert.strictEqual(yield* movedCount, 1, "one MOVED")
          assert.strictEqual(yield* ranges, 1, "run once, on the owner")
          // The first rows were handed over while most of the reply was still unread.
          assert.isAbove(moved.inHandWhenPaused, 0)
          assert.isBelow(moved.inHandWhenPaused, rows)
          assert.isBelow(moved.readWhenPaused, moved.total / 2)

          // --- ASK: the slot is migrating and the key has left: ASKING + the stream on the importing node
          const askKey = `{ask-${label}}list`
          yield* fill(askKey)
          assert.strictEqual(Number(yield* redis.execute(["LLEN", askKey])), rows)
          const migration = yield* beginMove(askKey, [askKey])
          const askCount = yield* since(migration.from, "errorstat_ASK.count")
          const askings = yield* since(migration.to, "cmdstat_asking.calls")
          const asked = yield* streamedRows(redis, askKey)
          assert.strictEqual(yield* askCount, 1, "one ASK")
          assert.strictEqual(yield* askings, 1, "one ASKING")
          assert.isAbove(asked.inHandWhenPaused, 0)
          assert.isBelow(asked.readWhenPaused, asked.total / 2)
          // A submitted command meets the same ASK: its future resolves to the importing node's reply.
          const askedLength = yield* redis.submit(["LLEN", askKey])
          assert.strictEqual(Number(yield* askedLength.await), rows)
          assert.strictEqual(yield* askCount, 2, "a second ASK")
          assert.strictEqual(yield* askings, 2, "a second ASKING")
          yield* endMove(migration)

          // --- executeFolded: MOVED and ASK followed like execute's, each attempt on a fold of its own
          const elementsOf = () => {
            const got: Array<string> = []
            return {
              depth: 1,
              open: () => {},
              value: (depth: number, value: Reply) => {
                if (depth === 1) got.push(text(value))
              },
              close: () => {},
              result: () => got
            }
          }
          assert.isDefined(redis.executeFolded, "the cluster client folds on the node itself")
          const foldMovedKey = `{fold-moved-${label}}list`
          yield* fill(foldMovedKey)
          const foldMove = yield* beginMove(foldMovedKey, [foldMovedKey])
          yield* endMove(foldMove)
          const foldMoved = yield* since(foldMove.from, "errorstat_MOVED.count")
          assert.deepStrictEqual(
            yield* RedisConnection.executeFolded(redis, ["LRANGE", foldMovedKey, "0", "-1"], elementsOf),
            values
          )
          assert.strictEqual(yield* foldMoved, 1, "one MOVED for the folded command")
          const foldAskKey = `{fold-ask-${label}}list`
          yield* fill(foldAskKey)
          const foldMigration = yield* beginMove(foldAskKey, [foldAskKey])
          const foldAsks = yield* since(foldMigration.from, "errorstat_ASK.count")
          const foldAskings = yield* since(foldMigration.to, "cmdstat_asking.calls")
          assert.deepStrictEqual(
            yield* RedisConnection.executeFolded(redis, ["LRANGE", foldAskKey, "0", "-1"], elementsOf),
            values
          )
          assert.strictEqual(yield* foldAsks, 1, "one ASK for the folded command")
          assert.strictEqual(yield* foldAskings, 1, "one ASKING")
          yield* endMove(foldMigration)

          // --- submit: MOVED followed, the future resolves to the new owner's reply
          const tag = `{submit-${label}}`
          assert.strictEqual(yield* redis.execute(["SET", `${tag}a`, "first"]), "OK")
          const submitMove = yield* beginMove(tag, [`${tag}a`])
          yield* endMove(submitMove)
          const submitMoved = yield* since(submitMove.from, "errorstat_MOVED.count")
          // Never awaited before it lands: the redirected write is sent again by the client itself.
          const write = yield* redis.submit(["SET", `${tag}b`, "second"])
          yield* until(
            Effect.map(adminOf(submitMove.to).execute(["GET", `${tag}b`]), (value) => value !== null),
            "the redirected write to land on the new owner"
          )
          assert.strictEqual(yield* write.await, "OK")
          assert.strictEqual(yield* write.poll, "OK")
          const read = yield* redis.submit(["GET", `${tag}a`])
          assert.strictEqual(text(yield* read.await), "first")
          assert.strictEqual(
            yield* submitMoved,
            1,
            "one MOVED: the map learned the move, the read went straight to the new owner"
          )
          assert.strictEqual(text(yield* adminOf(submitMove.to).execute(["GET", `${tag}b`])), "second")
          // Per-key order of submitted commands, the slot staying put: 200 RPUSH never awaited in between.
          if (label === "multiplexed") {
            const pushes = yield* Effect.forEach(
              Array.from({ length: 200 }, (_, i) => i),
              (i) => redis.submit(["RPUSH", `${tag}order`, String(i)])
            )
            yield* Effect.forEach(pushes, (push) => push.await)
            assert.deepStrictEqual(
              ((yield* redis.execute(["LRANGE", `${tag}order`, "0", "-1"])) as ReadonlyArray<Reply>).map(text),
              Array.from({ length: 200 }, (_, i) => String(i))
            )
          }
          console.log(
            `cluster ${label}: streamed LRANGE of ${rows} rows (${moved.total} bytes) followed MOVED and ASK; submit followed MOVED and ASK; paused with ${moved.inHandWhenPaused} / ${asked.inHandWhenPaused} rows in hand after ${moved.readWhenPaused} / ${asked.readWhenPaused} bytes read`
          )
        }
      })
  )
})
