/**
 * Redis Cluster against one node: the same closed loop of `execute(SET)` over keys spread on
 * every slot, through a multiplexed client of one node and a multiplexed cluster client of
 * three primaries (one engine per node), at 64 and 256 callers; throughput and the Node
 * process's CPU time per command (routing by hash slot is the client's extra work). The
 * cluster (three `redis-server --cluster-enabled yes` on loopback) is started for the run and
 * stopped after it.
 *
 * @since 0.1.0
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import { replyToString } from "@effect-falkordb/resp/Reply"
import * as Effect from "effect/Effect"
import * as ChildProcess from "node:child_process"
import * as Harness from "./harness.ts"

type Service = RedisConnection.RedisConnection["Service"]

const VALUE = "0123456789abcdef"

const redisCli = (args: ReadonlyArray<string>) =>
  Effect.callback<string, Error>((resume) => {
    ChildProcess.execFile("redis-cli", args, { timeout: 30_000 }, (error, stdout, stderr) =>
      resume(error ? Effect.fail(new Error(`${error.message}\n${stdout}\n${stderr}`)) : Effect.succeed(String(stdout)))
    )
  })

/** Three primaries, no replicas, every slot assigned; stopped with the scope. */
const startCluster = Effect.gen(function* () {
  const servers = yield* Effect.forEach([0, 1, 2], () => Embedded.make({ cluster: true, module: false }))
  yield* redisCli([
    "--cluster",
    "create",
    ...servers.map((s) => `127.0.0.1:${s.port}`),
    "--cluster-replicas",
    "0",
    "--cluster-yes"
  ])
  const admins = yield* Effect.forEach(servers, (s) => RedisConnection.makeSingle({ port: s.port }))
  for (let attempt = 0; ; attempt++) {
    const states = yield* Effect.forEach(admins, (admin) =>
      Effect.map(admin.execute(["CLUSTER", "INFO"]), (reply) => replyToString(reply) ?? "")
    )
    if (states.every((info) => info.includes("cluster_state:ok"))) break
    if (attempt > 200) return yield* Effect.fail(new Error("the benchmark cluster did not reach cluster_state:ok"))
    yield* Effect.sleep(50)
  }
  return servers
})

const cell = (redis: Service, callers: number, millis: number) =>
  Harness.cpuLoop(callers, millis, (caller, i) => redis.execute(["SET", `bench:${(caller * 7919 + i) & 4095}`, VALUE]))

/**
 * Runs the table and renders it.
 *
 * @since 0.1.0
 * @category benchmarks
 */
export const run = (options: Omit<Harness.TableOptions, "port">): Effect.Effect<string, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const single = yield* Embedded.make({ module: false })
      const servers = yield* startCluster
      const variants: ReadonlyArray<readonly [string, Service]> = [
        ["one node", yield* RedisConnection.makeMultiplexed({ port: single.port })],
        [
          "cluster (3 primaries)",
          yield* RedisConnection.makeFromOptions({
            strategy: "multiplexed",
            cluster: { nodes: servers.map((s) => `127.0.0.1:${s.port}`) }
          })
        ]
      ]
      for (const [, redis] of variants) yield* cell(redis, 64, options.warmupMillis)
      const loads = [64, 256]
      const samples = new Map<string, Array<{ readonly rate: number; readonly cpuMicrosPerOp: number }>>()
      for (let round = 0; round < options.runs; round++) {
        for (const callers of loads) {
          for (const [name, redis] of variants) {
            const key = `${callers}/${name}`
            samples.set(key, [...(samples.get(key) ?? []), yield* cell(redis, callers, options.millis)])
          }
        }
      }
      const rows: Array<Array<string>> = []
      for (const callers of loads) {
        const base = Harness.median((samples.get(`${callers}/one node`) ?? []).map((s) => s.rate))
        for (const [name] of variants) {
          const list = samples.get(`${callers}/${name}`) ?? []
          const rate = Harness.median(list.map((s) => s.rate))
          rows.push([
            String(callers),
            name,
            Harness.formatRate(rate),
            Harness.formatRatio(rate / base),
            Harness.formatMicros(Harness.median(list.map((s) => s.cpuMicrosPerOp)))
          ])
        }
      }
      return [
        "### Redis Cluster against one node (multiplexed, execute SET over 4096 keys)",
        "",
        `One redis-server ${single.version} against a cluster of three on the same machine (loopback, ` +
          "persistence off, no replicas); one engine per node. On a machine with fewer cores than " +
          "servers the cluster cannot scale: read the CPU column for the client's routing cost.",
        "",
        Harness.table(["callers", "topology", "ops/s", "vs one node", "CPU µs/op (Node)"], rows)
      ].join("\n")
    })
  )
