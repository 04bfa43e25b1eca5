import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { Embedded } from "@effect-falkordb/embedded"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { afterAll } from "vitest"

const ping = (target: { port: number } | { path: string }) =>
  Effect.callback<string>((resume) => {
    const s = "path" in target ? Net.connect(target.path) : Net.connect(target.port, "127.0.0.1")
    s.once("connect", () => s.write("*1\r\n$4\r\nPING\r\n"))
    s.once("data", (d) => {
      s.destroy()
      resume(Effect.succeed(d.toString()))
    })
    s.once("error", (e) => resume(Effect.succeed(`error: ${e.message}`)))
  })

/** One inline command's raw reply (the whole first chunk: small replies only). */
const send = (port: number, command: string) =>
  Effect.callback<string>((resume) => {
    const s = Net.connect(port, "127.0.0.1")
    s.once("connect", () => s.write(`${command}\r\n`))
    s.once("data", (d) => {
      s.destroy()
      resume(Effect.succeed(d.toString()))
    })
    s.once("error", (e) => resume(Effect.succeed(`error: ${e.message}`)))
  })

/** True when something accepts a TCP connection on the port (the cluster bus speaks no RESP). */
const accepts = (port: number) =>
  Effect.callback<boolean>((resume) => {
    const s = Net.connect(port, "127.0.0.1")
    s.once("connect", () => {
      s.destroy()
      resume(Effect.succeed(true))
    })
    s.once("error", () => resume(Effect.succeed(false)))
  })

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

// The fake binaries and pid files live in one temp dir that goes when the file's tests end.
const scratch = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-falkordb-embedded-test-"))
afterAll(() => Fs.rmSync(scratch, { recursive: true, force: true }))

const script = (body: string) => {
  const dir = Fs.mkdtempSync(Path.join(scratch, "fake-redis-"))
  const file = Path.join(dir, "redis-server")
  Fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 })
  return file
}

describe("Embedded", () => {
  it.live("starts on a free port and answers PING", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make()
        assert.isTrue(server.port > 0)
        assert.strictEqual(yield* ping({ port: server.port }), "+PONG\r\n")
        assert.strictEqual(server.url, `redis://127.0.0.1:${server.port}`)
        assert.match(server.version, /^\d+\.\d+\.\d+$/)
      })
    )
  )

  it.live("a cluster node listens for its cluster bus on a free port of its own", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make({ cluster: true })
        assert.match(yield* send(server.port, "CLUSTER INFO"), /cluster_enabled:1|cluster_state:/)
        const reply = yield* send(server.port, "CONFIG GET cluster-port")
        const busPort = Number(/cluster-port\r\n\$\d+\r\n(\d+)\r\n/.exec(reply)?.[1])
        assert.isTrue(busPort > 0 && busPort <= 65535 && busPort !== server.port, reply)
        // The bus answers connections (it is not the default port + 10000, which may be past 65535).
        assert.isTrue(yield* accepts(busPort))
      })
    )
  )

  it.live("unix socket mode", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make({ unixSocket: true })
        assert.isDefined(server.unixSocket)
        assert.strictEqual(yield* ping({ path: server.unixSocket! }), "+PONG\r\n")
      })
    )
  )

  it.live("two servers get different ports", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const [a, b] = yield* Effect.all([Embedded.make(), Embedded.make()], { concurrency: 2 })
        assert.notStrictEqual(a.port, b.port)
      })
    )
  )

  it.live("scope close kills the process and removes the dir, also on failure", () =>
    Effect.gen(function* () {
      let pid: number | undefined
      let dir = ""
      const exit = yield* Effect.exit(
        Effect.scoped(
          Effect.gen(function* () {
            const server = yield* Embedded.make()
            pid = yield* server.pid
            dir = server.dir
            assert.isTrue(Fs.existsSync(dir))
            return yield* Effect.fail("boom")
          })
        )
      )
      assert.isTrue(Exit.isFailure(exit))
      assert.isDefined(pid)
      assert.isFalse(alive(pid!))
      assert.isFalse(Fs.existsSync(dir))
    })
  )

  it.live("kill + restart on the same port", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make()
        const first = yield* server.pid
        yield* server.kill
        assert.isUndefined(yield* server.pid)
        assert.isFalse(alive(first!))
        yield* server.restart
        assert.notStrictEqual(yield* server.pid, first)
        assert.strictEqual(yield* ping({ port: server.port }), "+PONG\r\n")
      })
    )
  )

  it.live("SIGSTOP / SIGCONT via signal", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const server = yield* Embedded.make()
        yield* server.signal("SIGSTOP")
        const stalled = yield* Effect.timeoutOption(ping({ port: server.port }), "300 millis")
        assert.strictEqual(stalled._tag, "None")
        yield* server.signal("SIGCONT")
        assert.strictEqual(yield* ping({ port: server.port }), "+PONG\r\n")
      })
    )
  )

  it.live("missing binary -> BinaryNotFound with hint", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Effect.scoped(Embedded.make({ binary: "/nonexistent/redis-server" })))
      assert.strictEqual(error.reason._tag, "BinaryNotFound")
      assert.include(error.hint, "REDIS_SERVER")
    })
  )

  it.live("old version -> VersionTooOld", () =>
    Effect.gen(function* () {
      const binary = script(`echo "Redis server v=5.0.1 sha=00000000:0 malloc=libc bits=64 build=0"`)
      const error = yield* Effect.flip(Effect.scoped(Embedded.make({ binary })))
      assert.strictEqual(error.reason._tag, "VersionTooOld")
      assert.include(error.message, "5.0.1")
    })
  )

  it.live("missing module -> ModuleLoadFailed with the server's message", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Effect.scoped(Embedded.make({ module: "/nonexistent/falkordb.so" })))
      assert.strictEqual(error.reason._tag, "ModuleLoadFailed")
      assert.include(error.message, "/nonexistent/falkordb.so")
    })
  )

  it.live("a server that never answers -> StartTimeout and the process is killed", () =>
    Effect.gen(function* () {
      const pidFile = Path.join(Fs.mkdtempSync(Path.join(scratch, "fake-pid-")), "pid")
      const binary = script(
        `if [ "$1" = "--version" ]; then echo "Redis server v=7.0.15"; exit 0; fi\necho $$ > ${pidFile}\nexec sleep 30`
      )
      const error = yield* Effect.flip(Effect.scoped(Embedded.make({ binary, startTimeout: "500 millis" })))
      assert.strictEqual(error.reason._tag, "StartTimeout")
      const pid = Number(Fs.readFileSync(pidFile, "utf8").trim())
      assert.isFalse(alive(pid))
    })
  )
})
