/**
 * Listening on `127.0.0.1` and a free port for the life of a scope: on close, every client
 * socket in `sockets` is destroyed and the listener closed. Shared by the test servers.
 *
 * @internal
 */
import type * as Net from "node:net"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** The port `server` listens on; `failed` turns a listen error into the caller's error. */
export const listenLoopback = <E>(
  server: Net.Server,
  sockets: ReadonlySet<Net.Socket>,
  failed: (cause: Error) => E
): Effect.Effect<number, E, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<number, E>((resume) => {
      const onError = (cause: Error) => resume(Effect.fail(failed(cause)))
      server.once("error", onError)
      server.listen({ host: "127.0.0.1", port: 0 }, () => {
        server.off("error", onError)
        resume(Effect.succeed((server.address() as Net.AddressInfo).port))
      })
    }),
    () =>
      Effect.callback<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  )
