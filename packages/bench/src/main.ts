/**
 * The benchmark command: `npx -y pnpm@12.4.2 bench` (add `--quick` for fewer runs).
 * Prints markdown tables labelled with machine, Node version and date.
 * Today it runs the RESP decoder table; the connection-strategy, engine and peer tables of
 * the full-duplex issue land with the connection engine.
 */
import * as Decoder from "./decoder.ts"

const quick = process.argv.includes("--quick")
console.log(Decoder.toMarkdown(Decoder.run({ runs: quick ? 3 : 7 })))
