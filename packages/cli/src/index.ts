/**
 * The `effect-falkordb` command line (`Cli`), also usable from a program.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Cli from "./Cli.ts"
