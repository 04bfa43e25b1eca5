/**
 * One graph workload against a real FalkorDB, run long enough to profile or to compare CPU per
 * query between this client and falkordb-ts:
 *
 * ```sh
 * ./node_modules/.bin/node --conditions=@effect-falkordb/source --cpu-prof --cpu-prof-dir=/tmp/prof \
 *   packages/bench/src/graph-profile.ts --query=traversal --callers=1 --seconds=5 --client=ours
 * ```
 *
 * Flags: `--query=return1|traversal|large` (`large`: 20,000 nodes per reply), `--callers=` (1),
 * `--seconds=` (5), `--client=ours|falkordb-ts|raw` (`raw`: a floor, the pre-encoded command on `--connections`
 * plain sockets, each reply framed by the RESP decoder and not decoded further), `--port=` (a server that has the module; else one
 * is started with the module Embedded finds). Prints queries/s and this process's CPU µs per query;
 * `--top` prints the functions with the most self time from a CPU profile of the run (no file needed);
 * `--alloc` the bytes allocated per query and the top allocation sites (`--alloc-callers` with callers);
 * `--connections=N` sets this client's engines (default 8, the graph layer's own default);
 * `--whole-replies` has this client read each reply whole before decoding it (`streamRows: false`);
 * `--rate=N` paces the callers to N queries/s together (`pacer.ts`), to compare CPU at one rate;
 * `--hold=N|off` sets this client's `holdWritesAbove` (default: the graph layer's, 2);
 * `--unix=PATH` has both clients connect over the server's unix socket instead of TCP (`--port` is
 * then only for a server this script starts).
 * `--read-values` has every caller read each value of each row by column name (`row.get`, or the
 * property of falkordb-ts's row object).
 * `--warmup=S` runs S seconds (default 1) before the measured ones, for a slow machine where code is still
 * being optimised after one.
 * `--graph=NAME` queries graph NAME (default `bench-profile`); `--setup=none` leaves it as it is (the
 * caller created it), else it is deleted and created again; `--json` prints the result as one JSON
 * line (`graph-isolated.ts` runs this script once per cell, each client in a process of its own).
 *
 * @since 0.1.0
 */
import * as Embedded from "@effect-falkordb/embedded/Embedded"
import * as FalkorDB from "@effect-falkordb/graph/FalkorDB"
import type * as Graph from "@effect-falkordb/graph/Graph"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Net from "node:net"
import { Decoder } from "@effect-falkordb/resp/Decoder"
import { encodeCommand } from "@effect-falkordb/resp/Encoder"
import { FalkorDB as FalkorTs } from "falkordb"
import * as Harness from "./harness.ts"
import * as Inspect from "./inspect.ts"
import * as Pacer from "./pacer.ts"

const flag = (name: string, fallback: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback

const GRAPH = flag("graph", "bench-profile")
const QUERIES: Record<string, string> = {
  return1: "RETURN 1 AS fast",
  traversal: "MATCH (a:Person {name: 'Alice'})-[r:KNOWS]->(b:Person) RETURN a AS node, r AS edge, b AS other",
  large: "MATCH (n:Item) RETURN n"
}
const query = QUERIES[flag("query", "traversal")]!
const callers = Number(flag("callers", "1"))
const seconds = Number(flag("seconds", "5"))
const warmupSeconds = Number(flag("warmup", "1"))
const client = flag("client", "ours")
const portFlag = flag("port", "")
// `--rate=N`: callers share a pacer of N queries/s (0: as fast as they go).
const rate = Number(flag("rate", "0"))
const pacedFor = <A, E>(body: (pacer: Pacer.Pacer | undefined) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
  rate > 0 ? Pacer.withRate(rate, body) : body(undefined)
// `--hold=N`: `holdWritesAbove` (the graph layer's default is 2); `--hold=off` never holds.
const hold = flag("hold", "")
// `--unix=PATH`: the server's unix socket, for both clients (same machine: no TCP/IP stack per write).
const unixPath = flag("unix", "")

// `--read-values`: every caller reads each value of each row by its column name, as an application does.
const readValues = process.argv.includes("--read-values")
const sink: { value: unknown } = { value: undefined }
const readRowValues = (result: Graph.QueryResult) => {
  for (const row of result.rows) for (const column of result.columns) sink.value = row.get(column)
}
const readPromiseValues = (result: { readonly data?: ReadonlyArray<unknown> | undefined }) => {
  for (const row of (result.data ?? []) as ReadonlyArray<Record<string, unknown>>) {
    for (const column in row) sink.value = row[column]
  }
}

/** A closed loop of `callers` running a promise op (`op(caller)`), paced when `--rate` is given. */
const promiseLoop =
  (op: (caller: number) => Promise<unknown>) =>
  (millis: number): Effect.Effect<Harness.Sample, unknown> =>
    pacedFor((pacer) => Effect.tryPromise(() => Harness.runPromiseLoop(callers, millis, Pacer.pacedPromise(pacer, op))))

const program = Effect.scoped(
  Effect.gen(function* () {
    let port = Number(portFlag)
    if (portFlag === "") {
      const server = yield* Embedded.make({ requireModule: true })
      port = server.port
    }
    const url = unixPath === "" ? `redis://127.0.0.1:${port}` : `redis+unix://${unixPath}`
    if (flag("setup", "") !== "none") {
      const admin = yield* RedisConnection.makeSingle({ url })
      yield* admin.execute(["GRAPH.DELETE", GRAPH]).pipe(Effect.ignore)
      yield* admin.execute([
        "GRAPH.QUERY",
        GRAPH,
        "CREATE (:Person {name: 'Alice', age: 30})-[:KNOWS {since: 2020}]->(:Person {name: 'Bob', age: 25})"
      ])
      yield* admin.execute([
        "GRAPH.QUERY",
        GRAPH,
        "UNWIND range(1, 20000) AS i CREATE (:Item {id: i, name: 'item-' + toString(i), score: i * 0.5})"
      ])
    }
    let loop: (millis: number) => Effect.Effect<Harness.Sample, unknown>
    if (client === "raw") {
      // The floor: `--connections` sockets (default 8, at most one per caller), caller c on socket
      // c mod n, each sending the pre-encoded command and awaiting one whole RESP reply, undecoded.
      const sockets = Math.min(Number(flag("connections", "8")), callers)
      const bytes = encodeCommand(["GRAPH.RO_QUERY", GRAPH, query, "--compact"])
      const lanes = yield* Effect.acquireRelease(
        Effect.promise(() =>
          Promise.all(
            Array.from(
              { length: sockets },
              () =>
                new Promise<{ socket: Net.Socket; waiting: Array<() => void> }>((resolve, reject) => {
                  const waiting: Array<() => void> = []
                  const decoder = new Decoder(() => waiting.shift()?.())
                  const socket = Net.createConnection(
                    unixPath === "" ? { host: "127.0.0.1", port, noDelay: true } : { path: unixPath },
                    () => resolve({ socket, waiting })
                  )
                  socket.on("data", (chunk) => decoder.feed(chunk))
                  socket.once("error", reject)
                })
            )
          )
        ),
        (lanes) =>
          Effect.sync(() => {
            for (const lane of lanes) lane.socket.destroy()
          })
      )
      const send = (caller: number) =>
        new Promise<void>((resolve) => {
          const lane = lanes[caller % sockets]!
          lane.waiting.push(resolve)
          lane.socket.write(bytes)
        })
      loop = promiseLoop(send)
    } else if (client === "falkordb-ts") {
      const db = yield* Effect.acquireRelease(
        Effect.tryPromise(() =>
          FalkorTs.connect({ socket: unixPath === "" ? { host: "127.0.0.1", port } : { path: unixPath } })
        ),
        (db) => Effect.promise(() => db.close().catch(() => undefined))
      )
      const g = db.selectGraph(GRAPH)
      loop = promiseLoop(() => (readValues ? g.roQuery(query).then(readPromiseValues) : g.roQuery(query)))
    } else {
      // `--whole-replies`: `query` reads the whole reply before decoding it (`streamRows: false`).
      const streamRows = !process.argv.includes("--whole-replies")
      // `--connections=N`: the multiplexed client's engines (the graph layer's default is 8).
      const connections = Number(flag("connections", "8"))
      const context = yield* Layer.build(
        FalkorDB.layer({
          url,
          streamRows,
          ...(connections === 1 ? { connections: 1 } : { connections, routing: "spread" as const }),
          ...(hold === "" ? {} : { holdWritesAbove: hold === "off" ? Number.POSITIVE_INFINITY : Number(hold) })
        })
      )
      const g = (context.mapUnsafe.get(FalkorDB.FalkorDB.key) as FalkorDB.FalkorDB["Service"]).graph(GRAPH)
      loop = (millis) =>
        pacedFor((pacer) =>
          Harness.runEffectLoop(
            callers,
            millis,
            Pacer.paced(pacer, () => (readValues ? Effect.map(g.roQuery(query), readRowValues) : g.roQuery(query)))
          )
        )
    }
    // A short warm-up: schema caches filled, code optimised.
    yield* loop(warmupSeconds * 1000)
    const cpu = process.cpuUsage()
    const measured = loop(seconds * 1000)
    const sample = yield* process.argv.includes("--top")
      ? Inspect.cpuTop(measured)
      : process.argv.includes("--alloc")
        ? Inspect.allocations(measured, (s) => s.ops, {
            unit: "query",
            withCallers: process.argv.includes("--alloc-callers")
          })
        : measured
    const used = process.cpuUsage(cpu)
    if (process.argv.includes("--json")) {
      const { ops, seconds } = sample
      console.log(JSON.stringify({ client, ops, seconds, userMicros: used.user, systemMicros: used.system }))
      return
    }
    console.log(
      `${client} ${flag("query", "traversal")} ${callers} callers: ${Harness.formatRate(sample.ops / sample.seconds)}/s, ` +
        `CPU ${((used.user + used.system) / sample.ops).toFixed(1)} µs/query ` +
        `(user ${(used.user / sample.ops).toFixed(1)}, system ${(used.system / sample.ops).toFixed(1)}; ${sample.ops} queries)`
    )
  })
)

Effect.runPromise(program).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
