// Runs graph calls against a RespTestServer that replays one recorded scenario (compact pass
// plus its schema refresh), over a real socket. Where the client's request text differs from
// the recorded one only by how values travel (parameters instead of literals) or by a
// variable name, the test lists the pair [what the client sends, what was recorded]: the
// server checks the client sent exactly that text and answers with the recorded bytes.
// Each pair answers one request, in order; a request nobody recorded or listed is answered
// with an error reply and reported as unrecorded.
import * as RedisConnection from "@effect-falkordb/redis/RedisConnection"
import * as FixtureReplay from "@effect-falkordb/testing/FixtureReplay"
import * as RespTestServer from "@effect-falkordb/testing/RespTestServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FalkorDB from "../../src/FalkorDB.ts"

export type Command = ReadonlyArray<string>
export type Translation = readonly [sent: Command, recorded: Command, times?: number]

const handshake = new Set(["PING", "HELLO", "AUTH", "SELECT", "CLIENT"])

export interface ReplayOutcome<A> {
  readonly value: A
  /** Every non-handshake command the client sent, in order. */
  readonly sent: ReadonlyArray<Command>
  /** The connection (1, 2, … in accept order) each of `sent` came on. */
  readonly connections: ReadonlyArray<number>
  /** Commands neither recorded nor listed as translations. */
  readonly unrecorded: ReadonlyArray<Command>
  /** Translations the client never sent. */
  readonly unusedTranslations: ReadonlyArray<Command>
}

export const withReplay = <A, E>(
  scenario: string,
  use: (db: FalkorDB.FalkorDB["Service"]) => Effect.Effect<A, E>,
  options: {
    readonly translations?: ReadonlyArray<Translation>
    readonly strategy?: "single" | "multiplexed"
    readonly version?: string
    readonly protocol?: 2 | 3
  } = {}
): Effect.Effect<ReplayOutcome<A>, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const fixture = yield* FixtureReplay.loadScenario(options.version ?? "falkordb-4.18.11", scenario)
      const replay = FixtureReplay.replay(fixture, { pass: "compact" })
      const recorded = new Set(fixture.exchanges.map((e) => JSON.stringify(e.request)))
      const pending = [...(options.translations ?? [])].map(([sent, rec, times]) => ({
        sent: JSON.stringify(sent),
        recorded: rec,
        left: times ?? 1,
        used: false
      }))
      const unrecorded: Array<Command> = []
      const handler: RespTestServer.Handler = (request, connection) => {
        const key = JSON.stringify(request.command)
        const translation = pending.find((t) => t.left > 0 && t.sent === key)
        if (translation !== undefined) {
          translation.left--
          translation.used = true
          return replay.handler({ ...request, command: translation.recorded }, connection)
        }
        if (!recorded.has(key) && !handshake.has(request.name)) unrecorded.push(request.command)
        return replay.handler(request, connection)
      }
      const server = yield* RespTestServer.make({ handler })
      const layer =
        options.strategy === "multiplexed"
          ? FalkorDB.layer({ url: server.url, connections: 4, protocol: options.protocol ?? 2 })
          : FalkorDB.layerFromRedis.pipe(
              Layer.provide(RedisConnection.layerSingle({ url: server.url, protocol: options.protocol ?? 2 }))
            )
      const value = yield* Effect.gen(function* () {
        return yield* use(yield* FalkorDB.FalkorDB)
      }).pipe(Effect.provide(layer))
      const received = yield* server.received
      return {
        value,
        sent: received.filter((r) => !handshake.has(r.name)).map((r) => r.command),
        connections: received.filter((r) => !handshake.has(r.name)).map((r) => r.connection),
        unrecorded,
        unusedTranslations: pending.filter((t) => !t.used).map((t) => JSON.parse(t.sent) as Command)
      }
    })
  )
