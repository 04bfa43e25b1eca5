/**
 * Opening a socket to a server (TCP, TLS or unix, bounded by `connectTimeout`, with a hint for
 * the common failures) and the handshake commands sent on it before any user command. Shared
 * by the engine and the pub/sub subscriber.
 *
 * @internal
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import { ErrorReply, type Reply } from "@effect-falkordb/resp/Reply"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Net from "node:net"
import * as Tls from "node:tls"
import { fromErrorReply, Offline, RedisError } from "../RedisError.ts"
import type { Credentials, ResolvedOptions } from "../RedisOptions.ts"
import { commandName } from "./CommandValidation.ts"

/** Adds the human hint for the common connect failures. */
const connectHint = (options: ResolvedOptions, cause: NodeJS.ErrnoException): string => {
  switch (cause.code) {
    case "ECONNREFUSED":
      return " (nothing listens there: is the server running, and is the port right?)"
    case "ENOENT":
      return " (no such unix socket)"
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return " (the host name does not resolve)"
    case "CERT_HAS_EXPIRED":
      return " (the server's certificate has expired)"
    case "DEPTH_ZERO_SELF_SIGNED_CERT":
    case "SELF_SIGNED_CERT_IN_CHAIN":
    case "UNABLE_TO_VERIFY_LEAF_SIGNATURE":
    case "UNABLE_TO_GET_ISSUER_CERT_LOCALLY":
      return " (the server's certificate is not signed by a CA this client trusts: pass its CA as tls.ca or tls.caFile)"
    case "ERR_TLS_CERT_ALTNAME_INVALID":
      return " (the server's certificate does not name this host: connect by a name it carries, or set tls.servername)"
    case "ERR_SSL_WRONG_VERSION_NUMBER":
    case "ERR_SSL_PACKET_LENGTH_TOO_LONG":
      return " (the server does not speak TLS here: use redis:// instead of rediss://)"
    default:
      return options.tls !== undefined ? " (TLS handshake failed)" : ""
  }
}

/**
 * Opens a TCP/TLS/unix socket within `connectTimeout` (also used by the pub/sub subscriber);
 * `address` defaults to the configured one (a Sentinel engine passes the located one).
 */
export const openSocket = (
  options: ResolvedOptions,
  address: ResolvedOptions["address"] = options.address,
  target: string = options.target
): Effect.Effect<Net.Socket, RedisError> =>
  Effect.callback<Net.Socket, RedisError>((resume) => {
    const socket =
      options.tls !== undefined && address._tag === "Tcp"
        ? Tls.connect({ host: address.host, port: address.port, ...options.tls })
        : address._tag === "Tcp"
          ? Net.connect({ host: address.host, port: address.port })
          : Net.connect({ path: address.path })
    const settle = (result: Effect.Effect<Net.Socket, RedisError>) => {
      clearTimeout(timer)
      socket.removeListener("error", onError)
      resume(result)
    }
    const onError = (cause: NodeJS.ErrnoException) => {
      socket.destroy()
      settle(
        Effect.fail(
          new RedisError({
            reason: new Offline({
              message: `could not connect to ${target}: ${cause.message}${connectHint(options, cause)}`,
              cause
            })
          })
        )
      )
    }
    const timer = setTimeout(() => {
      socket.destroy()
      settle(
        Effect.fail(
          new RedisError({
            reason: new Offline({
              message: `could not connect to ${target} within ${options.connectTimeout} ms (connectTimeout)${options.tls !== undefined ? "; the TLS handshake did not complete: if the server does not speak TLS on this port, use redis:// instead of rediss://" : ""}`
            })
          })
        )
      )
    }, options.connectTimeout)
    socket.once("error", onError)
    socket.once(options.tls !== undefined ? "secureConnect" : "connect", () => {
      socket.setNoDelay(true)
      socket.setKeepAlive(true, 30_000)
      settle(Effect.succeed(socket))
    })
    return Effect.sync(() => {
      clearTimeout(timer)
      socket.destroy()
    })
  })

/** `AUTH [username] password`: a live connection's re-authentication, and the RESP2 handshake's. */
export const authCommand = (credentials: Credentials): Command => {
  const password = Redacted.value(credentials.password)
  return credentials.username === undefined ? ["AUTH", password] : ["AUTH", credentials.username, password]
}

/**
 * The handshake commands, in the order they are sent (also used by the pub/sub subscriber);
 * `credentials` (from the `credentials` option) replace `username`/`password`.
 */
export const handshakeCommands = (
  options: ResolvedOptions,
  credentials: Credentials | undefined = options.password === undefined
    ? undefined
    : { username: options.username, password: options.password }
): Array<Command> => {
  const commands: Array<Command> = []
  if (options.protocol === 3) {
    const hello: Array<string> = ["HELLO", "3"]
    if (credentials !== undefined) {
      hello.push("AUTH", credentials.username ?? "default", Redacted.value(credentials.password))
    }
    commands.push(hello)
  } else if (credentials !== undefined) {
    commands.push(authCommand(credentials))
  }
  if (options.database !== 0) commands.push(["SELECT", options.database])
  if (options.clientName !== undefined) commands.push(["CLIENT", "SETNAME", options.clientName])
  // A cluster replica serves reads of its slots only to connections that said READONLY.
  if (options.replicaReads === true) commands.push(["READONLY"])
  // A client cache's CLIENT TRACKING: on every (re)connect, before any user command.
  if (options.hooks !== undefined) for (const command of options.hooks.handshake) commands.push(command)
  // The readiness probe, last: a server loading its dataset answers it with -LOADING (and
  // a peer that is not Redis, or expects TLS, is caught here).
  commands.push(["PING"])
  return commands
}

/** The name of a handshake command as sent (`AUTH`, `CLIENT SETNAME` …), never its arguments (a password). */
const handshakeName = (command: Command): string => {
  const name = commandName(command)
  return name === "CLIENT" ? `CLIENT ${String(command[1]).toUpperCase()}` : name
}

/**
 * A handshake command the server refused, as the connect's error (naming the command, never
 * its arguments). A refused `SELECT` says which databases servers serve: the servers differ on
 * a cluster (Redis: `SELECT is not allowed in cluster mode`; Valkey 9: `DB index is out of
 * range` past its `cluster-databases`).
 */
export const handshakeRefusal = (reply: ErrorReply, command: Command, target: string): RedisError => {
  const name = commandName(command)
  const advice =
    name === "SELECT"
      ? ` (database ${String(command[1])}: a Redis Cluster serves database 0 only, a Valkey 9 cluster the first cluster-databases, a standalone server the first databases of its config)`
      : ""
  return fromErrorReply(
    reply,
    name,
    `handshake with ${target} failed at ${handshakeName(command)}: ${reply.message}${advice}`
  )
}

/**
 * The first refusal among the handshake's replies (`replies[i]` answers `commands[i]`).
 * `NOPERM` on `CLIENT SETNAME` or on the readiness `PING` is not an error: a least-privilege
 * ACL user may AUTH but not name its connection (the name is only a label) nor PING (its
 * answer shows the server is ready).
 */
export const handshakeFailure = (
  commands: ReadonlyArray<Command>,
  replies: ReadonlyArray<Reply>,
  target: string
): RedisError | undefined => {
  for (let i = 0; i < replies.length; i++) {
    const reply = replies[i]
    if (!(reply instanceof ErrorReply)) continue
    const name = handshakeName(commands[i]!)
    if (reply.code === "NOPERM" && (name === "CLIENT SETNAME" || name === "PING")) continue
    return handshakeRefusal(reply, commands[i]!, target)
  }
  return undefined
}
