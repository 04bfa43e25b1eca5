// Readers of the bulk loader's inputs, streamed: a file is read in chunks and parsed as the
// chunks arrive (never read whole). CSV goes through csv-parse; JSONL is split into lines here.
// A reader yields arrays of rows (one array per chunk read) and reports the bytes it read.
import * as Fs from "node:fs"
import { Parser } from "csv-parse"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { InvalidSource, LoadError, MalformedRow } from "../LoadError.ts"

/** One row: its 1-based line and its cells (CSV: strings by position; objects: by key). */
export interface TextRow {
  readonly line: number
  readonly cells: ReadonlyArray<string>
}

/** One record of JSONL or a user's Stream, with its line (JSONL) or position (from 1). */
export interface ObjectRow {
  readonly line: number
  readonly record: { readonly [key: string]: unknown }
}

const loadError = (reason: LoadError["reason"]) => new LoadError({ reason })

const readFailed = (path: string) => (cause: unknown) =>
  loadError(
    new InvalidSource({
      source: path,
      detail: `cannot be read: ${cause instanceof Error ? cause.message : String(cause)}`,
      cause
    })
  )

/** The file's chunks, read lazily with backpressure; `onBytes` counts what was read. */
const fileChunks = (path: string, onBytes: (n: number) => void): Stream.Stream<Uint8Array, LoadError> =>
  Stream.suspend(() =>
    Stream.fromAsyncIterable(
      Fs.createReadStream(path, { highWaterMark: 256 * 1024 }) as AsyncIterable<Buffer>,
      readFailed(path)
    )
  ).pipe(Stream.tap((chunk) => Effect.sync(() => onBytes(chunk.length))))

/**
 * csv-parse driven one chunk at a time, synchronously: the Transform's own `_transform` and
 * `_flush` hooks are called directly and `push` collects the records, so parsing needs no
 * event loop turn per record.
 */
class ChunkParser extends Parser {
  records: Array<{ readonly record: Array<string>; readonly info: { readonly lines: number } }> = []
  override push(chunk: unknown): boolean {
    if (chunk !== null) this.records.push(chunk as (typeof this.records)[number])
    return true
  }
}

/** What a csv-parse error says about where it happened. */
const csvProblem = (path: string, error: unknown): LoadError => {
  const e = error as { readonly message?: string; readonly lines?: number; readonly code?: string }
  return loadError(
    new MalformedRow({
      source: path,
      line: typeof e.lines === "number" ? e.lines : undefined,
      column: undefined,
      detail: `${e.code === undefined ? "" : `${e.code}: `}${e.message ?? String(error)}`,
      cause: error
    })
  )
}

/**
 * CSV rows of the file at `path`; the first row is the header. Rows of a different length
 * than the header are left to the loader, which names the columns.
 */
export const csvRows = (
  path: string,
  options: { readonly delimiter?: string | undefined },
  onBytes: (n: number) => void
): Stream.Stream<ReadonlyArray<TextRow>, LoadError> =>
  Stream.suspend(() => {
    const parser = new ChunkParser({
      delimiter: options.delimiter ?? ",",
      info: true,
      bom: true,
      skip_empty_lines: true,
      relax_column_count: true
    })
    const drain = (): ReadonlyArray<TextRow> => {
      // `info.lines` is the line where the record ends; a record starts on the line after the
      // previous one ended (empty lines skipped are rare and only shift the count forward).
      const rows = parser.records.map((r) => ({ line: r.info.lines, cells: r.record }))
      parser.records = []
      return rows
    }
    const step = (run: (done: (error?: unknown) => void) => void) =>
      Effect.suspend(() => {
        let failure: unknown
        run((error) => {
          failure = error ?? undefined
        })
        return failure === undefined ? Effect.succeed(drain()) : Effect.fail(csvProblem(path, failure))
      })
    return fileChunks(path, onBytes).pipe(
      Stream.mapEffect((chunk) => step((done) => parser._transform(chunk, "utf8", done))),
      Stream.concat(Stream.fromEffect(step((done) => parser._flush(done)))),
      Stream.filter((rows) => rows.length > 0)
    )
  })

/** JSONL records of the file at `path`: one JSON object per non-blank line. */
export const jsonlRows = (
  path: string,
  onBytes: (n: number) => void
): Stream.Stream<ReadonlyArray<ObjectRow>, LoadError> =>
  Stream.suspend(() => {
    const decoder = new TextDecoder("utf-8", { fatal: false })
    let pending = ""
    let line = 0
    const parseLines = (text: string, final: boolean): Effect.Effect<ReadonlyArray<ObjectRow>, LoadError> =>
      Effect.suspend(() => {
        const parts = (pending + text).split("\n")
        pending = final ? "" : parts.pop()!
        const rows: Array<ObjectRow> = []
        for (const part of parts) {
          line++
          const trimmed = part.trim()
          if (trimmed.length === 0) continue
          let record: unknown
          try {
            record = JSON.parse(trimmed)
          } catch (cause) {
            return Effect.fail(
              loadError(
                new MalformedRow({
                  source: path,
                  line,
                  column: undefined,
                  detail: `not JSON: ${cause instanceof Error ? cause.message : String(cause)}`,
                  cause
                })
              )
            )
          }
          if (typeof record !== "object" || record === null || Array.isArray(record)) {
            return Effect.fail(
              loadError(
                new MalformedRow({ source: path, line, column: undefined, detail: "a line must be one JSON object" })
              )
            )
          }
          rows.push({ line, record: record as ObjectRow["record"] })
        }
        return Effect.succeed(rows)
      })
    return fileChunks(path, onBytes).pipe(
      Stream.mapEffect((chunk) => parseLines(decoder.decode(chunk, { stream: true }), false)),
      Stream.concat(Stream.fromEffect(Effect.suspend(() => parseLines(decoder.decode(), true)))),
      Stream.filter((rows) => rows.length > 0)
    )
  })

/** The size of the file at `path`, or undefined when it cannot be read (the reader then fails). */
export const fileSize = (path: string): Effect.Effect<number | undefined> =>
  Effect.promise(() =>
    Fs.promises.stat(path).then(
      (s) => s.size,
      () => undefined
    )
  )
