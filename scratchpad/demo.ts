/**
 * The main demo: starts an embedded redis-server (with the FalkorDB module when
 * FALKORDB_MODULE points at one), talks RESP to it over a real socket with the project's
 * codec, and shows what a graph query answers on this server.
 *
 * Run: npx -y pnpm@12.4.2 demo
 *
 * The connection engine (RedisConnection layers) and the graph client are not landed yet;
 * this demo uses the codec directly and will move to them when they land.
 */
import { Embedded } from "@effect-falkordb/embedded"
import { Decoder, Encoder, Reply } from "@effect-falkordb/resp"
import { Console, Effect } from "effect"
import * as Net from "node:net"

/** Sends a batch of commands on one socket (pipelined) and collects exactly one reply per command. */
const roundTrip = (port: number, commands: ReadonlyArray<Encoder.Command>) =>
  Effect.callback<ReadonlyArray<Reply.Reply>, Error>((resume) => {
    const replies: Array<Reply.Reply> = []
    const socket = Net.connect({ host: "127.0.0.1", port, noDelay: true })
    const decoder = new Decoder.Decoder((reply) => {
      replies.push(reply)
      if (replies.length === commands.length) {
        socket.end()
        resume(Effect.succeed(replies))
      }
    })
    socket.on("data", (chunk) => {
      const error = decoder.feed(chunk)
      if (error) {
        socket.destroy()
        resume(Effect.fail(error))
      }
    })
    socket.on("error", (error) => resume(Effect.fail(error)))
    socket.write(Encoder.encodeCommands(commands))
    return Effect.sync(() => socket.destroy())
  })

const show = (reply: Reply.Reply): string =>
  reply instanceof Reply.ErrorReply
    ? `(error) ${reply.message}`
    : Array.isArray(reply)
      ? `[${reply.map(show).join(", ")}]`
      : JSON.stringify(Reply.replyToString(reply) ?? reply)

const program = Effect.gen(function* () {
  const server = yield* Embedded.EmbeddedServer
  yield* Console.log(
    `redis-server ${server.version} on ${server.url} (FalkorDB module ${server.moduleLoaded ? "loaded" : "not loaded"})`
  )
  const commands: ReadonlyArray<Encoder.Command> = [
    ["PING"],
    ["SET", "demo:greeting", "hello, graph"],
    ["GET", "demo:greeting"],
    ["INCRBY", "demo:counter", 41],
    ["INCR", "demo:counter"],
    ["GRAPH.QUERY", "demo", "RETURN 1 AS one", "--compact"]
  ]
  const replies = yield* roundTrip(server.port, commands)
  for (const [i, command] of commands.entries()) {
    yield* Console.log(`> ${command.join(" ")}\n  ${show(replies[i]!)}`)
  }
  const graphReply = replies[replies.length - 1]!
  if (graphReply instanceof Reply.ErrorReply && /unknown command/i.test(graphReply.message)) {
    yield* Console.log("The FalkorDB module is not loaded here; set FALKORDB_MODULE=/path/to/falkordb.so to load it.")
  }
})

program.pipe(Effect.provide(Embedded.layer()), Effect.runPromise).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
