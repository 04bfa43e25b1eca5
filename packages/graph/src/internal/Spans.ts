/**
 * The spans of the graph calls, opened only where someone can see them. A span costs a good
 * part of a query's client CPU (the span object, its clock readings, its attributes, the
 * parent-span context), so a call opens its span only when the fiber runs with a tracer
 * installed (`Tracer.Tracer` other than Effect's `nativeTracer`, which exports nothing —
 * Effect documents that comparison for this purpose) and `References.TracerEnabled` is on.
 * `Effect.withTracerEnabled(false)` around graph calls therefore turns their spans off even
 * with a tracer installed.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Tracer from "effect/Tracer"

/**
 * True when a span opened on `fiber` would reach a tracer. Read from the fiber's cache of its
 * context (`Fiber.Cache`: what `getRef(TracerEnabled)` and `getRef(Tracer)` would find, without
 * two context lookups per call); `tracer` is undefined there when none is installed, which is
 * the native tracer.
 */
export const tracing = (fiber: Fiber.Fiber<unknown, unknown>): boolean => {
  const cache = fiber.cache
  return cache.tracerEnabled && cache.tracer !== undefined && cache.tracer !== Tracer.nativeTracer
}

/**
 * `effect()` in a span named `name` whose attributes are `attributes()` (both built only when
 * the span is opened); `annotate` adds to the span what the success tells (rows, timings).
 * Without a tracer, `effect()` alone.
 */
export const traced = <A, E, R>(
  name: string,
  attributes: () => Record<string, unknown>,
  effect: () => Effect.Effect<A, E, R>,
  annotate?: (value: A, span: Tracer.Span) => void
): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    if (!tracing(fiber)) return effect()
    return Effect.useSpan(name, { attributes: attributes() }, (span) => {
      const inner =
        annotate === undefined
          ? effect()
          : Effect.map(effect(), (value) => {
              annotate(value, span)
              return value
            })
      return Effect.withParentSpan(inner, span, { captureStackTrace: false })
    })
  })
