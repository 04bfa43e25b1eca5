/**
 * What the profiling commands (`profile.ts`, `graph-profile.ts`) measure inside their own process
 * through the inspector: the bytes allocated per operation by allocation site (V8's sampling heap
 * profiler, collected objects included), and the functions with the most self time (a CPU
 * profile), without writing a file.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Inspector from "node:inspector"

let session: Inspector.Session | undefined
const post = (method: string, params?: object): Promise<any> => {
  if (session === undefined) {
    session = new Inspector.Session()
    session.connect()
  }
  return new Promise((resolve, reject) =>
    session!.post(method, params, (error, result) => (error === null ? resolve(result) : reject(error)))
  )
}

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}

const frameText = (frame: CallFrame) =>
  `${frame.functionName || "(anonymous)"} ${frame.url.replace(/^.*\/(packages|node_modules)\//, "")}:${frame.lineNumber + 1}`

interface SamplingNode {
  readonly callFrame: CallFrame
  readonly selfSize: number
  readonly children: ReadonlyArray<SamplingNode>
}

/**
 * Sampled bytes by allocation site (function, file, line), largest first; `withCallers` names
 * each site with the function that called it.
 *
 * @since 0.1.0
 * @category allocations
 */
export const allocationSites = (
  root: SamplingNode,
  withCallers: boolean
): { readonly total: number; readonly sites: Array<[string, number]> } => {
  const sites = new Map<string, number>()
  let total = 0
  const visit = (node: SamplingNode, caller: SamplingNode | undefined) => {
    if (node.selfSize > 0) {
      const site =
        withCallers && caller !== undefined
          ? `${frameText(node.callFrame)} < ${frameText(caller.callFrame)}`
          : frameText(node.callFrame)
      sites.set(site, (sites.get(site) ?? 0) + node.selfSize)
      total += node.selfSize
    }
    for (const child of node.children) visit(child, node)
  }
  visit(root, undefined)
  return { total, sites: [...sites].sort((a, b) => b[1] - a[1]) }
}

/**
 * Runs `effect` under the sampling heap profiler (every 1 KiB on average, short-lived objects
 * included) and prints the bytes allocated per operation (`opsOf` its result) and the top sites.
 *
 * @since 0.1.0
 * @category allocations
 */
export const allocations = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  opsOf: (a: A) => number,
  options: { readonly unit: string; readonly withCallers?: boolean; readonly top?: number }
): Effect.Effect<A, E, R> =>
  Effect.gen(function* () {
    yield* Effect.promise(async () => {
      await post("HeapProfiler.enable")
      await post("HeapProfiler.startSampling", {
        samplingInterval: 1024,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true
      })
    })
    const result = yield* effect
    const ops = opsOf(result)
    const { profile } = yield* Effect.promise(() => post("HeapProfiler.stopSampling"))
    const { total, sites } = allocationSites(profile.head, options.withCallers === true)
    console.log(
      `  ${(total / ops).toFixed(0)} bytes allocated per ${options.unit}; top sites (bytes per ${options.unit}):`
    )
    for (const [site, bytes] of sites.slice(0, options.top ?? 25)) {
      console.log(`  ${(bytes / ops).toFixed(1).padStart(8)}  ${site}`)
    }
    return result
  })

interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
}

/**
 * Runs `effect` under the CPU profiler and prints the functions with the most self time.
 *
 * @since 0.1.0
 * @category cpu
 */
export const cpuTop = <A, E, R>(effect: Effect.Effect<A, E, R>, top = 40): Effect.Effect<A, E, R> =>
  Effect.gen(function* () {
    yield* Effect.promise(async () => {
      await post("Profiler.enable")
      await post("Profiler.start")
    })
    const result = yield* effect
    const { profile } = yield* Effect.promise(() => post("Profiler.stop"))
    const byId = new Map<number, ProfileNode>((profile.nodes as Array<ProfileNode>).map((node) => [node.id, node]))
    const self = new Map<string, number>()
    const samples = profile.samples as Array<number>
    for (const id of samples) {
      const where = frameText(byId.get(id)!.callFrame)
      self.set(where, (self.get(where) ?? 0) + 1)
    }
    for (const [where, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(`${((100 * n) / samples.length).toFixed(1).padStart(5)}%  ${where}`)
    }
    return result
  })
