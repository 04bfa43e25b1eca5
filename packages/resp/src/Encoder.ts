/**
 * RESP command encoder.
 *
 * @since 0.1.0
 */

/**
 * One argument of a command. Numbers and bigints are sent as their decimal text.
 *
 * @since 0.1.0
 * @category models
 */
export type Argument = string | Uint8Array | number | bigint

/**
 * A command: its name followed by its arguments, each sent as a RESP bulk string.
 *
 * @since 0.1.0
 * @category models
 */
export type Command = ReadonlyArray<Argument>
