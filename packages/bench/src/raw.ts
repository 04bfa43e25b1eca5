/**
 * The JavaScript ceiling: the least a pipelined client can do on one `net.Socket`. Commands
 * issued in the same tick go out in one write; replies are matched by position. It reads
 * simple strings, integers, errors and bulk strings only (no aggregates), which is all the
 * benchmark's SET / INCR / PING / GET need.
 *
 * @since 0.1.0
 */
import type { Command } from "@effect-falkordb/resp/Encoder"
import { Buffer } from "node:buffer"
import * as Net from "node:net"

interface Waiter {
  readonly resolve: (value: unknown) => void
  readonly reject: (error: Error) => void
}

/**
 * A minimal pipelined client.
 *
 * @since 0.1.0
 * @category models
 */
export interface RawClient {
  readonly send: (command: Command) => Promise<unknown>
  readonly close: () => Promise<void>
}

const encode = (command: Command): string => {
  let out = `*${command.length}\r\n`
  for (const argument of command) {
    const text = typeof argument === "string" ? argument : String(argument)
    out += `$${Buffer.byteLength(text)}\r\n${text}\r\n`
  }
  return out
}

/**
 * Connects to `host:port` (Nagle off).
 *
 * @since 0.1.0
 * @category constructors
 */
export const connect = (port: number, host = "127.0.0.1"): Promise<RawClient> =>
  new Promise((resolveConnect, rejectConnect) => {
    const socket = Net.connect({ port, host, noDelay: true })
    let waiters: Array<Waiter> = []
    let head = 0
    let pending = ""
    let scheduled = false
    let rest: Buffer | undefined
    let failure: Error | undefined

    const flush = () => {
      scheduled = false
      const text = pending
      pending = ""
      socket.write(text)
    }

    const next = (): Waiter => {
      const waiter = waiters[head++]
      if (waiter === undefined) throw new Error("raw client: a reply arrived that nobody asked for")
      // Compact now and then so the FIFO does not grow without bound.
      if (head > 4096 && head * 2 > waiters.length) {
        waiters = waiters.slice(head)
        head = 0
      }
      return waiter
    }

    const fail = (error: Error) => {
      failure = error
      for (let i = head; i < waiters.length; i++) waiters[i]!.reject(error)
      waiters = []
      head = 0
    }

    socket.on("data", (chunk: Buffer) => {
      const data = rest === undefined ? chunk : Buffer.concat([rest, chunk])
      let pos = 0
      try {
        while (pos < data.length) {
          const eol = data.indexOf(13, pos)
          if (eol === -1 || eol + 1 >= data.length) break
          const type = data[pos]
          if (type === 36) {
            const length = Number(data.toString("latin1", pos + 1, eol))
            if (length < 0) {
              next().resolve(null)
              pos = eol + 2
              continue
            }
            const end = eol + 2 + length + 2
            if (end > data.length) break
            next().resolve(data.subarray(eol + 2, eol + 2 + length))
            pos = end
            continue
          }
          const line = data.toString("latin1", pos + 1, eol)
          if (type === 43) next().resolve(line)
          else if (type === 58) next().resolve(Number(line))
          else if (type === 45) next().reject(new Error(line))
          else throw new Error(`raw client: unsupported reply type ${String.fromCharCode(type ?? 0)}`)
          pos = eol + 2
        }
      } catch (error) {
        fail(error as Error)
        socket.destroy()
        return
      }
      rest = pos < data.length ? data.subarray(pos) : undefined
    })
    socket.once("error", (error) => {
      fail(error)
      rejectConnect(error)
    })
    socket.once("close", () => fail(failure ?? new Error("raw client: connection closed")))
    socket.once("connect", () =>
      resolveConnect({
        send: (command) =>
          new Promise((resolve, reject) => {
            if (failure !== undefined) return reject(failure)
            waiters.push({ resolve, reject })
            pending += encode(command)
            if (!scheduled) {
              scheduled = true
              // Everything sent in this tick goes out in one write.
              process.nextTick(flush)
            }
          }),
        close: () =>
          new Promise<void>((resolve) => {
            socket.once("close", () => resolve())
            socket.end()
          })
      })
    )
  })
