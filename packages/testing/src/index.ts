/**
 * Test aids: `FalkorDBMock`, `RedisMock`, the scriptable `RespTestServer`, `FixtureReplay` and
 * `CompactEncoder`. Each module is also its own entry point (`@effect-falkordb/testing/FalkorDBMock`, …).
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as RespTestServer from "./RespTestServer.ts"
/** @since 0.1.0 */
export * as FixtureReplay from "./FixtureReplay.ts"
/** @since 0.1.0 */
export * as RedisMock from "./RedisMock.ts"
/** @since 0.1.0 */
export * as CompactEncoder from "./CompactEncoder.ts"
/** @since 0.1.0 */
export * as FalkorDBMock from "./FalkorDBMock.ts"
/** @since 0.1.0 */
export * as FalkorDBSimulator from "./FalkorDBSimulator.ts"
