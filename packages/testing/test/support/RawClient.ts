// A bare node:net client for tests: it records every chunk exactly as it arrived, so tests
// can check bytes, chunk boundaries and closes without any RESP client in between.
import { Buffer } from "node:buffer"
import * as Net from "node:net"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"

export interface RawClient {
  readonly socket: Net.Socket
  readonly send: (text: string | Uint8Array) => Effect.Effect<void>
  /** Every chunk received so far, in order. */
  readonly chunks: () => ReadonlyArray<Buffer>
  /** All bytes received so far. */
  readonly bytes: () => Buffer
  /** Waits until at least `count` bytes have arrived, returns all bytes so far. */
  readonly awaitBytes: (count: number) => Effect.Effect<Buffer>
  /** Waits until at least `count` chunks have arrived. */
  readonly awaitChunks: (count: number) => Effect.Effect<ReadonlyArray<Buffer>>
  /** Waits for the socket to close; yields the error code if it closed with one. */
  readonly awaitClose: Effect.Effect<string | undefined>
}

const WAIT_LIMIT_MS = 10_000

const command = (...args: ReadonlyArray<string>): string =>
  `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join("")}`

export { command }

export const connect = (port: number): Effect.Effect<RawClient, never, import("effect/Scope").Scope> =>
  Effect.acquireRelease(
    Effect.callback<Net.Socket>((resume) => {
      const socket = Net.connect({ host: "127.0.0.1", port }, () => resume(Effect.succeed(socket)))
      socket.once("error", (cause) => resume(Effect.die(cause)))
    }),
    (socket) => Effect.sync(() => socket.destroy())
  ).pipe(
    Effect.map((socket) => {
      const chunks: Array<Buffer> = []
      let total = 0
      let closed: { code: string | undefined } | undefined
      let waiters: Array<() => void> = []
      const wake = () => {
        const current = waiters
        waiters = []
        for (const w of current) w()
      }
      let lastError: string | undefined
      socket.on("data", (chunk: Buffer) => {
        chunks.push(chunk)
        total += chunk.length
        wake()
      })
      socket.on("error", (cause: NodeJS.ErrnoException) => {
        lastError = cause.code ?? cause.message
      })
      socket.on("close", () => {
        closed = { code: lastError }
        wake()
      })
      // A wall-clock bound so a wrong expectation fails with what did arrive instead of
      // hanging until the test timeout (the TestClock would never fire an Effect timeout).
      const bounded = <A>(wait: Effect.Effect<A>, what: string): Effect.Effect<A> =>
        Effect.raceFirst(
          wait,
          Effect.callback<A>((resume) => {
            const timer = setTimeout(
              () =>
                resume(
                  Effect.die(
                    new Error(
                      `gave up waiting for ${what}; received ${JSON.stringify(Buffer.concat(chunks).toString("latin1"))}`
                    )
                  )
                ),
              WAIT_LIMIT_MS
            )
            return Effect.sync(() => clearTimeout(timer))
          })
        )
      const until = (ready: () => boolean, what: string): Effect.Effect<void> =>
        bounded(
          Effect.suspend(function loop(): Effect.Effect<void> {
            if (ready()) return Effect.void
            if (closed !== undefined && what !== "the close")
              return Effect.die(new Error(`socket closed while waiting (${total} bytes received)`))
            const deferred = Deferred.makeUnsafe<void>()
            waiters.push(() => Deferred.doneUnsafe(deferred, Effect.void))
            return Effect.flatMap(Deferred.await(deferred), () => Effect.suspend(loop))
          }),
          what
        )
      const client: RawClient = {
        socket,
        send: (text) =>
          Effect.callback<void>((resume) => {
            socket.write(text, () => resume(Effect.void))
          }),
        chunks: () => chunks.slice(),
        bytes: () => Buffer.concat(chunks),
        awaitBytes: (count) =>
          Effect.map(
            until(() => total >= count, `${count} bytes`),
            () => Buffer.concat(chunks)
          ),
        awaitChunks: (count) =>
          Effect.map(
            until(() => chunks.length >= count, `${count} chunks`),
            () => chunks.slice()
          ),
        awaitClose: Effect.map(
          until(() => closed !== undefined, "the close"),
          () => closed?.code
        )
      }
      return client
    })
  )
