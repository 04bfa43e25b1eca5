// Setup file of the server matrix's project graph@valkey-9.1 (vitest.matrix.ts): its FALKORDB_URL
// suites run against the FalkorDB on Valkey that scripts/falkordb-global-setup.ts started
// (FALKORDB_VALKEY_URL), never quietly against the run's other FalkorDB. Without one, FALKORDB_URL
// is removed, so those suites skip (the global setup said why, or failed the run under CI).
const expected = process.env.EFFECT_FALKORDB_MATRIX_SERVER ?? ""
if (process.env.FALKORDB_VALKEY_URL) {
  if (!process.env.FALKORDB_VALKEY_SERVER?.startsWith(expected)) {
    throw new Error(`the matrix's FalkorDB runs on ${process.env.FALKORDB_VALKEY_SERVER}, not on ${expected}…`)
  }
  process.env.FALKORDB_URL = process.env.FALKORDB_VALKEY_URL
  process.env.FALKORDB_SERVER_VERSION = process.env.FALKORDB_VALKEY_SERVER
} else {
  delete process.env.FALKORDB_URL
}
