/**
 * TLS between the nodes of a topology, on real servers that serve TLS only (Debian's
 * redis-server 7.0 with `--port 0`, certificates of a private CA made by openssl in the test,
 * client certificates required): a Redis Cluster with `tls-cluster` (created over TLS by
 * redis-cli) reached through `layerCluster`'s options and through a `rediss://` URL, and a
 * primary with its replica (`tls-replication`) behind a sentinel on a TLS port, across a
 * failover. The node certificate names 127.0.0.1 (an IP SAN): hostname verification stays on.
 */
import { type Reply, replyToString } from "@effect-falkordb/resp/Reply"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as RedisConnection from "../src/RedisConnection.ts"
import { hashSlot } from "../src/internal/HashSlot.ts"
import type { Credentials } from "../src/RedisOptions.ts"
import * as Certificates from "./fixtures/Certificates.ts"
import { failureOf } from "./fixtures/Failure.ts"
import { redisCli } from "./fixtures/RedisCli.ts"
import * as TlsOnly from "./fixtures/TlsOnly.ts"
import { until } from "./fixtures/Until.ts"

type Service = RedisConnection.RedisConnection["Service"]

/** Every word of a nested reply. */
const flatten = (reply: Reply): ReadonlyArray<string> =>
  Array.isArray(reply) ? (reply as ReadonlyArray<Reply>).flatMap(flatten) : [text(reply)]

const text = (reply: Reply): string => replyToString(reply) ?? String(reply)

/** `INFO <section>` field of a server, as text. */
const infoField = (admin: Service, section: string, field: string) =>
  Effect.map(admin.execute(["INFO", section]), (reply) =>
    new RegExp(`^${field}:(.*)$`, "m").exec(text(reply))?.[1]?.trim()
  )

/** Three TLS-only primaries, made a cluster by redis-cli over TLS. */
const tlsCluster = Effect.gen(function* () {
  const certificates = yield* Certificates.make
  const nodes = yield* Effect.forEach([0, 1, 2], () =>
    TlsOnly.make(certificates, { cluster: true, args: ["--cluster-node-timeout", "1000"] })
  )
  const { files } = certificates
  yield* redisCli([
    "--tls",
    "--cacert",
    files.ca,
    "--cert",
    files.clientCert,
    "--key",
    files.clientKey,
    "--cluster",
    "create",
    ...nodes.map((node) => `127.0.0.1:${node.port}`),
    "--cluster-yes"
  ])
  yield* until(
    Effect.map(
      Effect.forEach(nodes, (node) => Effect.map(node.admin.execute(["CLUSTER", "INFO"]), text)),
      (infos) => infos.every((info) => info.includes("cluster_state:ok"))
    ),
    "the cluster is ok on every node",
    1000
  )
  const ids = yield* Effect.forEach(nodes, (node) => Effect.map(node.admin.execute(["CLUSTER", "MYID"]), text))
  return { certificates, nodes, ids }
})

describe("TLS topologies", { timeout: 120_000 }, () => {
  it.live(
    "a cluster over TLS only (tls-cluster): routing over every primary by the tls-port of CLUSTER SHARDS, a MOVED followed over TLS, a rediss:// URL keeping TLS and its credentials on every node",
    () =>
      Effect.gen(function* () {
        const { certificates, nodes, ids } = yield* tlsCluster
        const tls = TlsOnly.clientTls(certificates)
        const seed = `127.0.0.1:${nodes[0]!.port}`

        // The nodes name a TLS port only: the client can only have used tls-port.
        const words = flatten(yield* nodes[0]!.admin.execute(["CLUSTER", "SHARDS"]))
        assert.include(words, "tls-port")
        assert.notInclude(words, "port")

        const client = yield* RedisConnection.makeFromOptions({
          cluster: { nodes: [seed] },
          tls,
          strategy: "multiplexed"
        })
        const keys = Array.from({ length: 300 }, (_, i) => `tls:${i}`)
        yield* Effect.forEach(keys, (key) => client.execute(["SET", key, key]), { concurrency: 16, discard: true })
        for (const key of keys.slice(0, 20)) assert.strictEqual(text(yield* client.execute(["GET", key])), key)
        const sizes = yield* Effect.forEach(nodes, (node) => Effect.map(node.admin.execute(["DBSIZE"]), Number))
        assert.strictEqual(
          sizes.reduce((a, b) => a + b, 0),
          keys.length
        )
        for (const size of sizes) assert.isAbove(size, 50, "every primary holds keys")

        // Move an empty slot of node 0 to node 1 behind the client's back: its next command there
        // meets MOVED from node 0 and is sent again to node 1, over TLS.
        const line = text(yield* nodes[0]!.admin.execute(["CLUSTER", "NODES"]))
          .split("\n")
          .find((entry) => entry.startsWith(ids[0]!))!
        const ranges = line
          .trim()
          .split(" ")
          .slice(8)
          .map((range) => range.split("-").map(Number))
        const ownedByNode0 = (slot: number) => ranges.some(([from, to]) => from! <= slot && slot <= (to ?? from)!)
        let moved = ""
        for (let i = 0; moved === ""; i++) {
          const key = `moved:{${i}}`
          const slot = hashSlot(key)
          if (!ownedByNode0(slot)) continue
          if (Number(yield* nodes[0]!.admin.execute(["CLUSTER", "COUNTKEYSINSLOT", String(slot)])) === 0) moved = key
        }
        const slot = String(hashSlot(moved))
        for (const node of [nodes[1]!, nodes[0]!, nodes[2]!]) {
          yield* node.admin.execute(["CLUSTER", "SETSLOT", slot, "NODE", ids[1]!])
        }
        const movedBefore = Number(
          (yield* infoField(nodes[0]!.admin, "errorstats", "errorstat_MOVED"))?.replace("count=", "") ?? 0
        )
        assert.strictEqual(yield* client.execute(["SET", moved, "after-move"]), "OK")
        assert.strictEqual(text(yield* nodes[1]!.admin.execute(["GET", moved])), "after-move")
        const movedAfter = Number(
          (yield* infoField(nodes[0]!.admin, "errorstats", "errorstat_MOVED"))?.replace("count=", "") ?? 0
        )
        assert.isAbove(movedAfter, movedBefore, "node 0 answered MOVED")

        // A rediss:// URL: its user and password reach every node, and so does TLS.
        for (const node of nodes) {
          yield* node.admin.execute(["ACL", "SETUSER", "app", "on", ">cluster-secret", "+@all", "~*"])
        }
        const viaUrl = yield* RedisConnection.makeFromOptions({
          url: `rediss://app:cluster-secret@${seed}`,
          cluster: { nodes: [] },
          tls,
          strategy: "pooled",
          size: 2
        })
        yield* Effect.forEach(keys, (key) => viaUrl.execute(["GET", key]), { concurrency: 8, discard: true })
        for (const node of nodes) {
          assert.match(text(yield* node.admin.execute(["CLIENT", "LIST"])), /user=app/, "the URL's user on every node")
        }
        // TLS from the URL's scheme alone: the nodes' certificate is checked (and refused: the
        // system CAs do not know the test CA), so the node connections did speak TLS.
        const schemeOnly = failureOf(
          yield* Effect.exit(
            RedisConnection.makeFromOptions({ url: `rediss://${seed}`, cluster: { nodes: [] }, connectTimeout: 2000 })
          )
        )
        assert.include(schemeOnly.message, "not signed by a CA this client trusts")
        // Mutual TLS: without a client certificate no node takes the client.
        const noClientCert = failureOf(
          yield* Effect.exit(
            RedisConnection.makeFromOptions({
              cluster: { nodes: [seed] },
              tls: { caFile: certificates.files.ca },
              connectTimeout: 2000
            })
          )
        )
        assert.include(["Offline", "ConnectionLost", "NoNode"], noClientCert.reason._tag)
      })
  )
})

const NAME = "tlsprimary"

describe("TLS to Sentinel", { timeout: 120_000 }, () => {
  it.live(
    "a primary and its replica (tls-replication) behind a TLS-only sentinel whose ACL user's password rotates (sentinelCredentials): located over TLS, reads from the replica, a failover followed over TLS",
    () =>
      Effect.gen(function* () {
        const certificates = yield* Certificates.make
        const tls = TlsOnly.clientTls(certificates)
        const dataArgs = ["--repl-ping-replica-period", "1", "--repl-diskless-sync-delay", "0"]
        const primary = yield* TlsOnly.make(certificates, { args: dataArgs })
        const replica = yield* TlsOnly.make(certificates, {
          args: [...dataArgs, "--replicaof", "127.0.0.1", String(primary.port)]
        })
        // Replication itself runs over TLS: the replica reaches the primary's TLS port.
        yield* until(
          Effect.map(infoField(replica.admin, "replication", "master_link_status"), (status) => status === "up"),
          "the replica's link to the primary is up",
          1000
        )
        const config = [
          `sentinel monitor ${NAME} 127.0.0.1 ${primary.port} 1`,
          `sentinel down-after-milliseconds ${NAME} 1000`,
          `sentinel failover-timeout ${NAME} 3000`,
          "requirepass sentinel-admin",
          ""
        ].join("\n")
        const sentinel = yield* TlsOnly.make(certificates, { sentinel: true, config, adminPassword: "sentinel-admin" })
        yield* until(
          Effect.map(sentinel.admin.execute(["SENTINEL", "REPLICAS", NAME]), (reply) => {
            const words = flatten(reply)
            return words.includes(String(replica.port)) && words[words.indexOf("master-link-status") + 1] === "ok"
          }),
          "the sentinel knows the replica over TLS",
          1000
        )
        yield* sentinel.admin.execute(["ACL", "SETUSER", "watcher", "on", ">watch-one", "+@all", "&*"])

        const secrets = yield* Queue.unbounded<Credentials>()
        yield* Queue.offer(secrets, { username: "watcher", password: Redacted.make("watch-one") })
        const address = `127.0.0.1:${sentinel.port}`
        const client = yield* RedisConnection.makeFromOptions({
          sentinel: {
            sentinels: [address],
            name: NAME,
            sentinelTls: tls,
            sentinelCredentials: Stream.fromQueue(secrets)
          },
          tls,
          strategy: "multiplexed",
          commandTimeout: "3 seconds",
          offlineTimeout: "20 seconds",
          reconnect: { baseDelay: 20, maxDelay: 200 }
        })
        assert.strictEqual(yield* client.execute(["SET", "before", "1"]), "OK")
        assert.strictEqual(text(yield* primary.admin.execute(["GET", "before"])), "1")
        yield* until(
          Effect.map(client.execute(["GET", "before"], { readPreference: "replica" }), (reply) => reply !== null),
          "a read from the replica sees the write",
          500
        )
        const role = yield* client.execute(["INFO", "replication"], { readPreference: "replica" })
        assert.match(text(role), /^role:slave/m)
        // The +switch-master watcher holds a subscription on the sentinel, over TLS, as the ACL user.
        yield* until(
          Effect.map(sentinel.admin.execute(["CLIENT", "LIST"]), (reply) =>
            text(reply)
              .split("\n")
              .some(
                (line) => line.includes("addr=127.0.0.1") && line.includes("user=watcher") && line.includes(" sub=2 ")
              )
          ),
          "the watcher subscribes over TLS",
          500
        )

        // Rotation: the sentinel's password changes, the stream emits the new one; then a failover
        // makes every connection ask the sentinel again.
        yield* sentinel.admin.execute(["ACL", "SETUSER", "watcher", "resetpass", ">watch-two"])
        yield* Queue.offer(secrets, { username: "watcher", password: Redacted.make("watch-two") })
        yield* sentinel.admin.execute(["ACL", "LOG", "RESET"])
        yield* until(
          Effect.map(client.execute(["PING"]), () => true),
          "the client still answers",
          10
        )
        yield* sentinel.admin.execute(["SENTINEL", "FAILOVER", NAME])
        yield* until(
          Effect.map(sentinel.admin.execute(["SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME]), (reply) =>
            flatten(reply).includes(String(replica.port))
          ),
          "the sentinel names the replica as the primary",
          1500
        )
        // The client carries on over TLS on the new primary.
        yield* until(
          Effect.gen(function* () {
            const exit = yield* Effect.exit(client.execute(["SET", "after", "2"]))
            if (exit._tag === "Failure") return false
            return text(yield* replica.admin.execute(["GET", "after"])) === "2"
          }),
          "a write lands on the promoted replica",
          1500
        )
        assert.strictEqual(text(yield* client.execute(["GET", "before"])), "1")
        // Every connect to the sentinel since the rotation used the new password.
        const refusals = yield* sentinel.admin.execute(["ACL", "LOG"])
        assert.deepStrictEqual(refusals, [], "no command of the watcher was refused since the rotation")

        // Mutual TLS: the sentinel takes no client without a certificate (NoSentinel names it).
        const noClientCert = failureOf(
          yield* Effect.exit(
            RedisConnection.makeFromOptions({
              sentinel: {
                sentinels: [address],
                name: NAME,
                sentinelTls: { caFile: certificates.files.ca },
                sentinelCredentials: Stream.fromQueue(secrets)
              },
              tls,
              connectTimeout: 2000
            })
          )
        )
        assert.strictEqual(noClientCert.reason._tag, "NoSentinel")
        assert.include(noClientCert.message, address)
      })
  )
})

describe("TLS topology options", () => {
  it.effect("bad input: typed Config errors naming the sentinel's or the cluster's field", () =>
    Effect.gen(function* () {
      const refused = (options: RedisConnection.LayerOptions) =>
        Effect.map(Effect.exit(RedisConnection.makeFromOptions(options)), failureOf)
      const sentinel = { sentinels: ["127.0.0.1:1"], name: NAME }
      const missingCa = yield* refused({ sentinel: { ...sentinel, sentinelTls: { caFile: "/no/such/ca.crt" } } })
      assert.strictEqual(missingCa.reason._tag === "Config" && missingCa.reason.field, "sentinel.sentinelTls.caFile")
      assert.include(missingCa.message, "sentinelTls.caFile")
      const both = yield* refused({
        sentinel: {
          ...sentinel,
          sentinelPassword: "p",
          sentinelCredentials: Effect.succeed({ password: Redacted.make("q") })
        }
      })
      assert.strictEqual(both.reason._tag === "Config" && both.reason.field, "sentinel.sentinelCredentials")
      const fromUrl = yield* refused({
        url: `redis+sentinel://127.0.0.1:1/${NAME}?sentinelPassword=p`,
        sentinel: { ...sentinel, sentinelCredentials: Effect.succeed({ password: Redacted.make("q") }) }
      })
      assert.strictEqual(fromUrl.reason._tag === "Config" && fromUrl.reason.field, "sentinel.sentinelCredentials")
      const unixCluster = yield* refused({ url: "unix:///tmp/redis.sock", cluster: { nodes: ["127.0.0.1:7000"] } })
      assert.strictEqual(unixCluster.reason._tag === "Config" && unixCluster.reason.field, "url")
      const noSeed = yield* refused({ cluster: { nodes: [] } })
      assert.strictEqual(noSeed.reason._tag === "Config" && noSeed.reason.field, "cluster.nodes")
    })
  )
})
