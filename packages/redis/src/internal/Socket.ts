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
import { Buffer } from "node:buffer"
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

/** A slab read into; a new one is taken when less than `READ_MIN` of it is left. */
const SLAB_SIZE = 64 * 1024
const READ_MIN = 16 * 1024

/**
 * Reads a plain (TCP or unix) socket through Node's `onread` rather than `'data'` events:
 * each read lands in the unused tail of a 64 KiB slab and is handed over as a view of it.
 * This skips the readable-stream machinery and the buffer Node allocates per read (measured:
 * about 2 µs less CPU per round trip). Views are never overwritten (each read takes the tail
 * after the last), so the decoder's zero-copy replies stay valid, and a kept reply pins at
 * most 64 KiB, as a 64 KiB read chunk does on the `'data'` path. Chunks that arrive before
 * the reader is attached (a server may speak first, e.g. "max number of clients") wait.
 */
export class SocketReader {
  private slab: Buffer = Buffer.allocUnsafe(SLAB_SIZE)
  private offset = 0
  private target: ((chunk: Uint8Array) => void) | undefined = undefined
  private early: Array<Uint8Array> | undefined = undefined
  /** The `onread` option of `Net.connect`: Node asks for the next buffer after each read. */
  readonly onread = {
    buffer: (): Buffer => {
      if (this.slab.length - this.offset < READ_MIN) {
        this.slab = Buffer.allocUnsafe(SLAB_SIZE)
        this.offset = 0
      }
      return this.slab.subarray(this.offset)
    },
    // Returning false would pause the socket: reading goes on (the Connection pauses it itself).
    callback: (bytes: number, buffer: Uint8Array): boolean => {
      if (buffer.buffer === this.slab.buffer && buffer.byteOffset === this.slab.byteOffset + this.offset) {
        this.offset += bytes
      } else {
        // Not the tail handed out last (never seen): no part of this slab is handed out again.
        this.offset = this.slab.length
      }
      const chunk = buffer.subarray(0, bytes)
      if (this.target !== undefined) this.target(chunk)
      else (this.early ??= []).push(chunk)
      return true
    }
  }
  /** Where chunks go from now on (the ones that came first, at once). */
  attach(target: (chunk: Uint8Array) => void): void {
    this.target = target
    const early = this.early
    this.early = undefined
    if (early !== undefined) for (const chunk of early) target(chunk)
  }
}

const readerOption = (reader: SocketReader | undefined) => (reader === undefined ? {} : { onread: reader.onread })

/**
 * Opens a TCP/TLS/unix socket within `connectTimeout` (also used by the pub/sub subscriber);
 * `address` defaults to the configured one (a Sentinel engine passes the located one). A plain
 * socket given a `reader` is read through it (no `'data'` events); a TLS socket never is.
 */
export const openSocket = (
  options: ResolvedOptions,
  address: ResolvedOptions["address"] = options.address,
  target: string = options.target,
  reader?: SocketReader
): Effect.Effect<Net.Socket, RedisError> =>
  Effect.callback<Net.Socket, RedisError>((resume) => {
    const socket =
      options.tls !== undefined && address._tag === "Tcp"
        ? Tls.connect({ host: address.host, port: address.port, ...options.tls })
        : address._tag === "Tcp"
          ? Net.connect({ host: address.host, port: address.port, ...readerOption(reader) })
          : Net.connect({ path: address.path, ...readerOption(reader) })
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
