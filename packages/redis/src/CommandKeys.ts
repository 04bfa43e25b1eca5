/**
 * Where the keys of a command are, and what kind of command it is: the table a key-routed
 * multiplexer uses to pick an engine, and a connection layer uses to divert blocking and
 * connection-state commands away from a shared pipe.
 *
 * Key positions follow the key specs of Redis 7 (`COMMAND INFO`), including the commands whose
 * keys move: a `numkeys` argument (EVAL, FCALL, ZUNIONSTORE, LMPOP …), a keyword (XREAD `STREAMS`,
 * SORT/GEORADIUS `STORE`, MIGRATE `KEYS`) or a subcommand (OBJECT, MEMORY USAGE, XINFO, XGROUP).
 * FalkorDB's `GRAPH.*` commands are in the table too. Command names and keywords are matched
 * case-insensitively. An unknown command is keyless, not read-only, not blocking and does not
 * change connection state. A malformed command (e.g. a `numkeys` that is not a number, or larger
 * than the arguments that follow) yields only the keys that are really there; the server rejects
 * such a command anyway.
 *
 * @since 0.1.0
 */
import type { Argument, Command } from "@effect-falkordb/resp/Encoder"
import { hashSlot } from "./internal/HashSlot.ts"

// ---------------------------------------------------------------------------------------------
// key finders
// ---------------------------------------------------------------------------------------------

/** Finds key positions; `first` answers without allocating, for the routing hot path. */
interface Finder {
  readonly all: (command: Command) => Array<number>
  readonly first: (command: Command) => number
}

const latin1 = new TextDecoder("latin1")

/** Text of an argument for keyword and name comparison (names and keywords are ASCII). */
const text = (argument: Argument | undefined): string =>
  argument === undefined
    ? ""
    : typeof argument === "string"
      ? argument
      : argument instanceof Uint8Array
        ? latin1.decode(argument)
        : String(argument)

const upper = (argument: Argument | undefined): string => text(argument).toUpperCase()

/** A non-negative integer argument, or -1 when it is not one. */
const count = (argument: Argument | undefined): number => {
  const t = text(argument)
  if (!/^\d{1,9}$/.test(t)) return -1
  return Number(t)
}

const none: Finder = { all: () => [], first: () => -1 }

/**
 * Legacy `first, last, step` triple: `last` counts from the end when negative (-1 = the last
 * argument, -2 = all but the last, as BLPOP's timeout).
 */
const range = (first: number, last: number, step = 1): Finder => ({
  all: (command) => {
    const end = last < 0 ? command.length + last : Math.min(last, command.length - 1)
    const out: Array<number> = []
    for (let i = first; i <= end; i += step) out.push(i)
    return out
  },
  first: (command) => {
    const end = last < 0 ? command.length + last : last
    return first < command.length && first <= end ? first : -1
  }
})

/** `numkeys` at `at`, its keys right after it; `before` are fixed key positions ahead of it. */
const numkeys = (at: number, before: ReadonlyArray<number> = []): Finder => {
  const keyed = (command: Command) => {
    const n = count(command[at])
    return n < 0 ? 0 : Math.min(n, command.length - at - 1)
  }
  return {
    all: (command) => {
      const out = before.filter((i) => i < command.length)
      const n = keyed(command)
      for (let i = 0; i < n; i++) out.push(at + 1 + i)
      return out
    },
    first: (command) => {
      for (const i of before) if (i < command.length) return i
      return keyed(command) > 0 ? at + 1 : -1
    }
  }
}

/** The arguments after the first `keyword` (searched from `from`); the first half of them are keys. */
const streams = (keyword: string, from: number): Finder => {
  const find = (command: Command) => {
    for (let i = from; i < command.length; i++) {
      if (upper(command[i]) === keyword) {
        const rest = command.length - i - 1
        return { start: i + 1, n: rest % 2 === 0 ? rest / 2 : 0 }
      }
    }
    return { start: 0, n: 0 }
  }
  return {
    all: (command) => {
      const { n, start } = find(command)
      return Array.from({ length: n }, (_, i) => start + i)
    },
    first: (command) => {
      const { n, start } = find(command)
      return n > 0 ? start : -1
    }
  }
}

/** Positions found by a scan over the whole command; `first` is the smallest. */
const scanned = (all: (command: Command) => Array<number>): Finder => ({
  all,
  first: (command) => all(command)[0] ?? -1
})

/** The key at 1, then the argument after the last STORE / STOREDIST (GEORADIUS, GEORADIUSBYMEMBER). */
const georadius = (from: number): Finder => {
  const store = (command: Command) => {
    let at = -1
    for (let i = from; i < command.length - 1; i++) {
      const word = upper(command[i])
      if (word === "STORE" || word === "STOREDIST") at = i + 1
    }
    return at
  }
  return {
    all: (command) => {
      if (command.length < 2) return []
      const at = store(command)
      return at > 0 ? [1, at] : [1]
    },
    first: (command) => (command.length > 1 ? 1 : -1)
  }
}

/** SORT key [BY p] [LIMIT o c] [GET p …] [ASC|DESC] [ALPHA] [STORE dest]: the key, and the STORE target. */
const sort: Finder = {
  all: (command) => {
    if (command.length < 2) return []
    const out = [1]
    let store = -1
    for (let i = 2; i < command.length; i++) {
      const word = upper(command[i])
      if (word === "LIMIT") i += 2
      else if (word === "BY" || word === "GET") i += 1
      else if (word === "STORE" && i + 1 < command.length) store = ++i
    }
    if (store > 0) out.push(store)
    return out
  },
  first: (command) => (command.length > 1 ? 1 : -1)
}

/**
 * MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw | AUTH2 user pw] [KEYS key …]:
 * the key at 3, or, when it is empty, every argument after KEYS.
 */
const migrate: Finder = scanned((command) => {
  if (command.length < 4) return []
  if (text(command[3]) !== "") return [3]
  for (let i = 6; i < command.length; i++) {
    const word = upper(command[i])
    if (word === "AUTH") i += 1
    else if (word === "AUTH2") i += 2
    else if (word === "KEYS") return Array.from({ length: command.length - i - 1 }, (_, j) => i + 1 + j)
  }
  return []
})

// ---------------------------------------------------------------------------------------------
// the table
// ---------------------------------------------------------------------------------------------

const READ_ONLY = 1
const BLOCKING = 2
const STATE = 4

interface Entry {
  readonly keys: Finder
  readonly flags: number
  /** Refines the flags from the arguments (XREAD BLOCK, GRAPH.SLOWLOG RESET …). */
  readonly refine?: ((command: Command) => number) | undefined
  /** A container command: the entry is chosen by the subcommand at position 1. */
  readonly subcommands?: ReadonlyMap<string, Entry> | undefined
}

const entry = (keys: Finder, flags = 0, refine?: (command: Command) => number): Entry => ({ keys, flags, refine })

const key1 = range(1, 1)
const key2 = range(2, 2)
const all1 = range(1, -1)

const table = new Map<string, Entry>()

const define = (names: string, value: Entry): void => {
  for (const name of names.split(/\s+/)) if (name !== "") table.set(name, value)
}

const container = (name: string, subcommands: Record<string, Entry>, flags = 0): void => {
  const map = new Map<string, Entry>()
  for (const [names, value] of Object.entries(subcommands)) {
    for (const sub of names.split(/\s+/)) if (sub !== "") map.set(sub, value)
  }
  table.set(name, { keys: none, flags, subcommands: map })
}

// One key at 1, read-only.
define(
  `BITCOUNT BITFIELD_RO BITPOS DUMP EXPIRETIME GEODIST GEOHASH GEOPOS GEORADIUSBYMEMBER_RO GEORADIUS_RO
   GEOSEARCH GET GETBIT GETRANGE HEXISTS HGET HGETALL HKEYS HLEN HMGET HRANDFIELD HSCAN HSTRLEN HVALS
   LINDEX LLEN LPOS LRANGE PEXPIRETIME PTTL SCARD SISMEMBER SMEMBERS SMISMEMBER SRANDMEMBER SSCAN STRLEN
   SUBSTR TTL TYPE XLEN XPENDING XRANGE XREVRANGE ZCARD ZCOUNT ZLEXCOUNT ZMSCORE ZRANDMEMBER ZRANGE
   ZRANGEBYLEX ZRANGEBYSCORE ZRANK ZREVRANGE ZREVRANGEBYLEX ZREVRANGEBYSCORE ZREVRANK ZSCAN ZSCORE
   HTTL HPTTL HEXPIRETIME HPEXPIRETIME
   VCARD VDIM VEMB VGETATTR VINFO VISMEMBER VLINKS VRANDMEMBER VSIM`,
  entry(key1, READ_ONLY)
)
// One key at 1, writes.
define(
  `APPEND BITFIELD DECR DECRBY EXPIRE EXPIREAT GEOADD GETDEL GETEX GETSET HDEL HINCRBY HINCRBYFLOAT HMSET
   HSET HSETNX INCR INCRBY INCRBYFLOAT LINSERT LPOP LPUSH LPUSHX LREM LSET LTRIM MOVE PERSIST PEXPIRE
   PEXPIREAT PFADD PSETEX RESTORE RESTORE-ASKING RPOP RPUSH RPUSHX SADD SET SETBIT SETEX SETNX SETRANGE
   SPOP SREM XACK XADD XAUTOCLAIM XCLAIM XDEL XSETID XTRIM ZADD ZINCRBY ZPOPMAX ZPOPMIN ZREM
   ZREMRANGEBYLEX ZREMRANGEBYRANK ZREMRANGEBYSCORE
   HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT HPERSIST HGETDEL HGETEX HSETEX XDELEX XACKDEL
   VADD VREM VSETATTR`,
  entry(key1)
)
// Every argument is a key.
define("EXISTS MGET PFCOUNT SDIFF SINTER SUNION TOUCH", entry(all1, READ_ONLY))
define("DEL PFMERGE SDIFFSTORE SINTERSTORE SUNIONSTORE UNLINK", entry(all1))
// Shard channels are not keys (COMMAND GETKEYS leaves them out), though a cluster routes them by slot.
define("SPUBLISH", entry(none))
define("SSUBSCRIBE SUNSUBSCRIBE", entry(none, STATE))
define("WATCH", entry(all1, STATE))
define("MSET MSETNX", entry(range(1, -1, 2)))
// Two keys at 1 and 2.
define("LCS", entry(range(1, 2), READ_ONLY))
define("COPY GEOSEARCHSTORE LMOVE RENAME RENAMENX RPOPLPUSH SMOVE ZRANGESTORE", entry(range(1, 2)))
define("BITOP", entry(range(2, -1)))
define("PFDEBUG", entry(key2))
// numkeys.
define("EVAL EVALSHA FCALL", entry(numkeys(2)))
define("EVAL_RO EVALSHA_RO FCALL_RO", entry(numkeys(2), READ_ONLY))
define("SINTERCARD ZDIFF ZINTER ZINTERCARD ZUNION", entry(numkeys(1), READ_ONLY))
define("LMPOP ZMPOP", entry(numkeys(1)))
define("ZDIFFSTORE ZINTERSTORE ZUNIONSTORE", entry(numkeys(2, [1])))
// Keywords.
define(
  "XREAD",
  entry(streams("STREAMS", 1), READ_ONLY, (command) => (hasBlock(command, 1) ? BLOCKING : 0))
)
define(
  "XREADGROUP",
  entry(streams("STREAMS", 4), 0, (command) => (hasBlock(command, 4) ? BLOCKING : 0))
)
define("GEORADIUS", entry(georadius(6)))
define("GEORADIUSBYMEMBER", entry(georadius(5)))
define("SORT", entry(sort))
define("SORT_RO", entry(key1, READ_ONLY))
define("MIGRATE", entry(migrate))
// Blocking.
define("BLPOP BRPOP BZPOPMAX BZPOPMIN", entry(range(1, -2), BLOCKING))
define("BLMOVE BRPOPLPUSH", entry(range(1, 2), BLOCKING))
define("BLMPOP BZMPOP", entry(numkeys(2), BLOCKING))
define("WAIT WAITAOF", entry(none, BLOCKING))
// Keyless, connection state.
define(
  `MULTI EXEC DISCARD UNWATCH SUBSCRIBE PSUBSCRIBE UNSUBSCRIBE PUNSUBSCRIBE MONITOR SELECT AUTH HELLO
   RESET QUIT READONLY READWRITE ASKING SYNC PSYNC REPLCONF`,
  entry(none, STATE)
)
// Keyless, read-only.
define("DBSIZE KEYS LOLWUT RANDOMKEY SCAN PING ECHO TIME INFO LASTSAVE ROLE", entry(none, READ_ONLY))
// Keyless, writes or server administration.
define(
  `FLUSHALL FLUSHDB SWAPDB PUBLISH BGREWRITEAOF BGSAVE SAVE SHUTDOWN DEBUG FAILOVER REPLICAOF SLAVEOF
   PFSELFTEST`,
  entry(none)
)

function hasBlock(command: Command, from: number): boolean {
  for (let i = from; i < command.length; i++) {
    const word = upper(command[i])
    if (word === "STREAMS") return false
    if (word === "BLOCK") return true
  }
  return false
}

const read = entry(none, READ_ONLY)
const write = entry(none)

container("OBJECT", { "ENCODING FREQ IDLETIME REFCOUNT": entry(key2, READ_ONLY), HELP: read })
container("MEMORY", {
  USAGE: entry(key2, READ_ONLY),
  "DOCTOR HELP MALLOC-STATS STATS": read,
  PURGE: write
})
container("XINFO", { "CONSUMERS GROUPS STREAM": entry(key2, READ_ONLY), HELP: read })
container("XGROUP", { "CREATE CREATECONSUMER DELCONSUMER DESTROY SETID": entry(key2), HELP: read })
container("CLIENT", {
  "GETNAME GETREDIR ID INFO LIST TRACKINGINFO HELP": read,
  // These change the state of the connection that sends them.
  "REPLY TRACKING CACHING SETNAME NO-EVICT NO-TOUCH SETINFO": entry(none, STATE),
  "KILL PAUSE UNPAUSE UNBLOCK": write
})
container("CONFIG", { "GET HELP": read, "SET RESETSTAT REWRITE": write })
container("COMMAND", { "COUNT DOCS GETKEYS GETKEYSANDFLAGS HELP INFO LIST": read })
container("FUNCTION", { "DUMP LIST STATS HELP": read, "DELETE FLUSH LOAD RESTORE KILL": write })
container("SCRIPT", { "EXISTS HELP": read, "DEBUG FLUSH KILL LOAD": write })
container("SLOWLOG", { "GET LEN HELP": read, RESET: write })
container("LATENCY", { "DOCTOR GRAPH HELP HISTOGRAM HISTORY LATEST": read, RESET: write })
container("PUBSUB", { "CHANNELS NUMPAT NUMSUB SHARDCHANNELS SHARDNUMSUB HELP": read })
container("ACL", {
  "CAT GENPASS GETUSER HELP LIST LOG USERS WHOAMI DRYRUN": read,
  "DELUSER LOAD SAVE SETUSER": write
})
container("CLUSTER", {
  "COUNTKEYSINSLOT GETKEYSINSLOT HELP INFO KEYSLOT LINKS MYID NODES REPLICAS SHARDS SLAVES SLOTS": read,
  [`ADDSLOTS ADDSLOTSRANGE BUMPEPOCH COUNT-FAILURE-REPORTS DELSLOTS DELSLOTSRANGE FAILOVER FLUSHSLOTS FORGET
    MEET REPLICATE RESET SAVECONFIG SET-CONFIG-EPOCH SETSLOT`]: write
})
container("MODULE", { "HELP LIST": read, "LOAD LOADEX UNLOAD": write })

// FalkorDB. The graph name is the key. GRAPH.QUERY, EXPLAIN and PROFILE are flagged `write` by the
// module (a replica refuses them), so only GRAPH.RO_QUERY counts as read-only among the queries.
define("GRAPH.QUERY GRAPH.EXPLAIN GRAPH.PROFILE GRAPH.DELETE", entry(key1))
define("GRAPH.RO_QUERY", entry(key1, READ_ONLY))
define("GRAPH.COPY", entry(range(1, 2)))
define(
  "GRAPH.SLOWLOG",
  entry(key1, 0, (command) => (upper(command[2]) === "RESET" ? 0 : READ_ONLY))
)
define("GRAPH.LIST GRAPH.INFO", entry(none, READ_ONLY))
container("GRAPH.CONSTRAINT", { "CREATE DROP": entry(key2) })
container("GRAPH.MEMORY", { USAGE: entry(key2, READ_ONLY) })
container("GRAPH.CONFIG", { GET: read, SET: write })
container("GRAPH.UDF", { LIST: read, "LOAD DELETE FLUSH": write })

const nameOf = (command: Command): string | undefined => {
  const name = command[0]
  if (typeof name === "string") return name
  if (name instanceof Uint8Array) return latin1.decode(name)
  return undefined
}

const lookup = (command: Command): Entry | undefined => {
  const name = nameOf(command)
  if (name === undefined) return undefined
  // Most callers spell names in upper case: try that before paying for toUpperCase.
  const found = table.get(name) ?? table.get(name.toUpperCase())
  if (found?.subcommands === undefined) return found
  return found.subcommands.get(upper(command[1]))
}

const flagsOf = (command: Command): number => {
  const found = lookup(command)
  if (found === undefined) return 0
  return found.refine === undefined ? found.flags : found.flags | found.refine(command)
}

// ---------------------------------------------------------------------------------------------
// API
// ---------------------------------------------------------------------------------------------

/**
 * Positions of the key arguments of a command, in the order Redis reports them
 * (`COMMAND GETKEYS`). Empty for keyless and unknown commands.
 *
 * @since 0.1.0
 * @category keys
 */
export const keyIndices = (command: Command): ReadonlyArray<number> => {
  const found = lookup(command)
  return found === undefined ? [] : found.keys.all(command)
}

/**
 * The key arguments of a command, as they were passed.
 *
 * @example
 * ```ts
 * import * as CommandKeys from "@effect-falkordb/redis/CommandKeys"
 *
 * CommandKeys.keys(["EVAL", "return 1", "2", "a", "b", "arg"]) // ["a", "b"]
 * ```
 *
 * @since 0.1.0
 * @category keys
 */
export const keys = (command: Command): ReadonlyArray<Argument> => keyIndices(command).map((i) => command[i]!)

/**
 * The first key argument of a command, or `undefined` when it has none. Allocates nothing for
 * fixed-position commands: this is the routing hot path.
 *
 * @since 0.1.0
 * @category keys
 */
export const firstKey = (command: Command): Argument | undefined => {
  const found = lookup(command)
  if (found === undefined) return undefined
  const at = found.keys.first(command)
  return at < 0 ? undefined : command[at]
}

/**
 * The hash slot (0 … 16383) of the first key of a command, or `undefined` when it has none.
 * Numeric keys hash as their decimal text, as they are sent.
 *
 * @since 0.1.0
 * @category keys
 */
export const firstKeySlot = (command: Command): number | undefined => {
  const key = firstKey(command)
  if (key === undefined) return undefined
  return hashSlot(typeof key === "string" || key instanceof Uint8Array ? key : String(key))
}

/**
 * The command may wait on the server for an event of unbounded duration (BLPOP and the other
 * blocking pops, XREAD / XREADGROUP with BLOCK, WAIT, WAITAOF). On a shared pipe it would stall
 * every command behind it, so connection layers run it on an exclusive connection.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isBlocking = (command: Command): boolean => (flagsOf(command) & BLOCKING) !== 0

/**
 * The command changes the state of the connection that sends it (transactions, WATCH,
 * subscriptions, MONITOR, SELECT, AUTH, HELLO, RESET, QUIT, CLIENT REPLY / TRACKING / SETNAME …),
 * so it must not ride a connection shared with other callers.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isConnectionState = (command: Command): boolean => (flagsOf(command) & STATE) !== 0

/**
 * How a connection shared with other callers must treat the command, from one table lookup
 * (a connection layer asks this for every command): `"connectionState"` when it changes the
 * state of its connection (see `isConnectionState`; it wins over blocking), `"blocking"` when
 * it may wait on the server without bound (see `isBlocking`), otherwise `"shared"`.
 *
 * @example
 * ```ts
 * import * as CommandKeys from "@effect-falkordb/redis/CommandKeys"
 *
 * CommandKeys.sharing(["SET", "k", "v"]) // "shared"
 * CommandKeys.sharing(["BLPOP", "queue", 0]) // "blocking"
 * CommandKeys.sharing(["MULTI"]) // "connectionState"
 * ```
 *
 * @since 0.1.0
 * @category predicates
 */
export const sharing = (command: Command): "shared" | "blocking" | "connectionState" => {
  const flags = flagsOf(command)
  return (flags & STATE) !== 0 ? "connectionState" : (flags & BLOCKING) !== 0 ? "blocking" : "shared"
}

/**
 * The command changes no data and a read-only replica serves it: Redis' `readonly` commands
 * (GET, MGET, EXISTS, EVAL_RO …), harmless keyless ones (PING, INFO, CONFIG GET …) and FalkorDB's
 * GRAPH.RO_QUERY, GRAPH.LIST, GRAPH.INFO, GRAPH.MEMORY USAGE, GRAPH.SLOWLOG, GRAPH.CONFIG GET,
 * GRAPH.UDF LIST. Commands the server flags `write` (GRAPH.QUERY and GRAPH.EXPLAIN included) and
 * unknown commands are not.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isReadOnly = (command: Command): boolean => (flagsOf(command) & READ_ONLY) !== 0

/**
 * The command is in the table (a known Redis or FalkorDB command, or a known subcommand of a
 * container such as OBJECT or CLIENT).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isKnown = (command: Command): boolean => lookup(command) !== undefined
