// The built `effect-falkordb` binary (dist/bin.js, built once here with tsc -b) run as a child
// process against a real FalkorDB (FALKORDB_URL; the test setup starts one): outputs compared
// whole, exit codes, a progress bar under a pseudo-terminal (`script`), plain lines when piped,
// and a password that never shows.
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, beforeAll, describe, it } from "@effect/vitest"

const url = process.env.FALKORDB_URL
const packageDir = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const root = Path.resolve(packageDir, "../..")
const bin = Path.join(packageDir, "dist", "bin.js")
const graph = (name: string) => `effect-falkordb-cli:${name}:${process.pid}`

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const cli = (args: ReadonlyArray<string>, env: Record<string, string | undefined> = {}): Ran => {
  const result = ChildProcess.spawnSync(process.execPath, [bin, ...args], {
    env: { ...process.env, FALKORDB_URL: url, ...env },
    encoding: "utf8",
    timeout: 60_000
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

const tmp = (files: Record<string, string>) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-falkordb-cli-"))
  for (const [name, text] of Object.entries(files)) Fs.writeFileSync(Path.join(dir, name), text)
  return dir
}

describe.skipIf(!url)("effect-falkordb (the built binary) against a real FalkorDB", () => {
  beforeAll(() => {
    // The binary users run: compiled JavaScript importing the other packages' compiled output.
    const tsc = Path.join(root, "node_modules", ".bin", "tsc")
    const built = ChildProcess.spawnSync(tsc, ["-b", Path.join(packageDir, "tsconfig.build.json")], {
      cwd: root,
      encoding: "utf8",
      timeout: 120_000
    })
    if (built.status !== 0) throw new Error(`tsc -b failed: ${built.stdout}${built.stderr}`)
  })

  it("query: an aligned table, JSON lines and CSV, with parameters", () => {
    const g = graph("query")
    const q = "UNWIND range(1, $n) AS i RETURN i, $name + toString(i) AS s, i % 2 = 0 AS even, null AS nothing"
    const table = cli(["query", "-g", g, q, "--param", "n=3", "--param", "name=a,b"])
    assert.strictEqual(table.code, 0, table.stderr)
    assert.strictEqual(
      table.stdout,
      [
        "i | s    | even  | nothing",
        "--+------+-------+--------",
        "1 | a,b1 | false | null",
        "2 | a,b2 | true  | null",
        "3 | a,b3 | false | null",
        ""
      ].join("\n")
    )
    const json = cli(["query", "-g", g, q, "-p", "n=2", "-p", 'name="x"', "--format", "json"])
    assert.strictEqual(json.code, 0, json.stderr)
    assert.strictEqual(
      json.stdout,
      '{"i":1,"s":"x1","even":false,"nothing":null}\n{"i":2,"s":"x2","even":true,"nothing":null}\n'
    )
    const csv = cli(["query", "-g", g, q, "-p", "n=1", "-p", 'name=say "hi", ', "--format", "csv", "--ro"])
    assert.strictEqual(csv.code, 0, csv.stderr)
    assert.strictEqual(csv.stdout, 'i,s,even,nothing\n1,"say ""hi"", 1",false,\n')
    cli(["graphs", "delete", g])
  })

  it("writes print their statistics on stderr; explain and profile print the plan as a tree", () => {
    const g = graph("plan")
    const created = cli(["query", "-g", g, "UNWIND range(1, 5) AS i CREATE (:P {i: i})"])
    assert.strictEqual(created.code, 0, created.stderr)
    assert.strictEqual(created.stdout, "")
    assert.match(created.stderr, /^Labels added: 1, Nodes created: 5, Properties set: 5, time: [\d.]+ ms\n$/)
    const explain = cli(["explain", "-g", g, "MATCH (p:P) WHERE p.i > 2 RETURN p.i"])
    assert.strictEqual(explain.code, 0, explain.stderr)
    assert.match(explain.stdout, /^Results\n {2}Project\n {4}Filter\n {6}Node By Label Scan \| \(p:P\)\n$/)
    const profile = cli(["profile", "-g", g, "MATCH (p:P) WHERE p.i > 2 RETURN p.i"])
    assert.strictEqual(profile.code, 0, profile.stderr)
    assert.match(profile.stdout, /^Results \(records: 3, time: [\d.]+ ms\)\n/)
    assert.match(profile.stdout, /\n {6}Node By Label Scan \| \(p:P\) \(records: 5, time: [\d.]+ ms\)\n$/)
    cli(["graphs", "delete", g])
  })

  it("exit codes: 1 with message and hint for a query error, 2 for usage", () => {
    const bad = cli(["query", "-g", graph("bad"), "MATCH (n RETURN n"])
    assert.strictEqual(bad.code, 1)
    assert.match(bad.stderr, /^error: GRAPH\.QUERY on graph .* failed: .*\nhint: fix the Cypher text/)
    assert.strictEqual(bad.stdout, "")
    const unknown = cli(["nonsense"])
    assert.strictEqual(unknown.code, 2)
    const param = cli(["query", "-g", graph("bad"), "RETURN 1", "--param", "novalue"])
    assert.strictEqual(param.code, 2)
    assert.include(param.stderr, 'error: --param "novalue": expected name=value')
    const missingGraph = cli(["query", "RETURN 1"])
    assert.strictEqual(missingGraph.code, 2)
    const noGraph = cli(["migrate", "migrations"])
    assert.strictEqual(noGraph.code, 2)
    const help = cli(["--help"])
    assert.strictEqual(help.code, 0)
    assert.include(help.stdout, "load")
  })

  it("load piped: plain progress lines on stderr, the summary on stdout; graphs list, copy, delete", () => {
    const g = graph("load")
    const dir = tmp({
      "Person.csv": "id,name\n1,Ann\n2,Bob\n3,Cy\n",
      "KNOWS.csv": "a,b,since\n1,2,2001\n2,3,2002\n"
    })
    try {
      const loaded = cli([
        "load",
        "-g",
        g,
        "--nodes",
        Path.join(dir, "Person.csv"),
        "--relationships",
        Path.join(dir, "KNOWS.csv")
      ])
      assert.strictEqual(loaded.code, 0, loaded.stderr)
      assert.strictEqual(loaded.stdout, `graph ${g}: 3 nodes, 2 relationships in 1 GRAPH.BULK command\n`)
      assert.strictEqual(loaded.stderr, "loaded 1 command: 3 nodes, 2 relationships (53 B of 53 B read)\n")
      const again = cli(["load", "-g", g, "--nodes", `Person=${Path.join(dir, "Person.csv")}`])
      assert.strictEqual(again.code, 1)
      assert.include(again.stderr, "already exists")
      assert.include(again.stderr, "hint: load into a new name")
      const copied = cli(["graphs", "copy", g, `${g}:copy`])
      assert.strictEqual(copied.code, 0, copied.stderr)
      const listed = cli(["graphs", "list"])
      assert.include(listed.stdout.split("\n"), g)
      assert.include(listed.stdout.split("\n"), `${g}:copy`)
      const count = cli(["query", "-g", `${g}:copy`, "MATCH (:Person)-[k:KNOWS]->() RETURN count(k) AS n", "-f", "csv"])
      assert.strictEqual(count.stdout, "n\n2\n")
      assert.strictEqual(cli(["graphs", "delete", `${g}:copy`]).code, 0)
      assert.strictEqual(cli(["graphs", "delete", g]).stdout, `deleted ${g}\n`)
      const malformed = tmp({ "Bad.csv": "id,name\n1,Ann\n2\n" })
      const failed = cli(["load", "-g", g, "--nodes", Path.join(malformed, "Bad.csv")])
      assert.strictEqual(failed.code, 1)
      assert.include(failed.stderr, "Bad.csv:3")
      Fs.rmSync(malformed, { recursive: true, force: true })
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("load --ingest: the same files through batched Cypher, progress per batch; errors typed", () => {
    const g = graph("ingest")
    const dir = tmp({
      "Person.csv": "id,name,score\n1,Ann,1.0\n2,Bob,2.5\n3,Cy,3\n",
      "KNOWS.csv": "a,b,since\n1,2,2001\n2,3,2002\n",
      "Bad.csv": "a,b\n1,9\n"
    })
    try {
      const args = ["load", "-g", g, "--ingest", "--batch-size", "2", "--nodes", Path.join(dir, "Person.csv")]
      const loaded = cli([...args, "--relationships", Path.join(dir, "KNOWS.csv")])
      assert.strictEqual(loaded.code, 0, loaded.stderr)
      assert.strictEqual(loaded.stdout, `graph ${g}: 3 nodes, 2 relationships in 3 Ingest batches\n`)
      // Two batches in flight: a line may count both; the last one is the whole load.
      const lines = loaded.stderr.trimEnd().split("\n")
      for (const line of lines)
        assert.match(line, /^loaded \d+ batch(es)?: \d+ nodes, \d+ relationships \(\d+ B of 69 B read\)$/)
      assert.strictEqual(lines[lines.length - 1], "loaded 3 batches: 3 nodes, 2 relationships (69 B of 69 B read)")
      const typed = cli([
        "query",
        "-g",
        g,
        "MATCH (p:Person) RETURN p.id AS id, typeOf(p.score) AS t ORDER BY id",
        "-f",
        "csv"
      ])
      assert.strictEqual(typed.stdout, "id,t\n1,Float\n2,Float\n3,Integer\n")
      const knows = cli([
        "query",
        "-g",
        g,
        "MATCH (a)-[k:KNOWS]->(b) RETURN a.id AS a, b.id AS b, k.since AS s ORDER BY a",
        "-f",
        "csv"
      ])
      assert.strictEqual(knows.stdout, "a,b,s\n1,2,2001\n2,3,2002\n")
      const again = cli(args)
      assert.strictEqual(again.code, 1)
      assert.include(again.stderr, "already exists")
      assert.strictEqual(cli(["graphs", "delete", g]).code, 0)
      const unknown = cli([...args, "--relationships", `KNOWS=${Path.join(dir, "Bad.csv")}`])
      assert.strictEqual(unknown.code, 1)
      assert.include(unknown.stderr, "Bad.csv:2")
      assert.strictEqual(cli(["graphs", "delete", g]).code, 0)
      const missing = cli(["load", "-g", g, "--ingest", "--nodes", Path.join(dir, "Nope.csv")])
      assert.strictEqual(missing.code, 1)
      assert.include(missing.stderr, "Nope.csv")
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("load on a terminal (a pseudo-terminal from script): a progress bar redrawn in place", () => {
    const g = graph("tty")
    const rows = ["id,v"]
    for (let i = 0; i < 3000; i++) rows.push(`${i},${"x".repeat(20)}`)
    const dir = tmp({ "N.csv": `${rows.join("\n")}\n` })
    try {
      const command = [
        process.execPath,
        bin,
        "load",
        "-g",
        g,
        "--nodes",
        Path.join(dir, "N.csv"),
        "--max-buffer-size",
        "1"
      ]
        .map((a) => `'${a.replace(/'/g, "'\\''")}'`)
        .join(" ")
      const result = ChildProcess.spawnSync("script", ["-qec", command, "/dev/null"], {
        env: { ...process.env, FALKORDB_URL: url },
        encoding: "utf8",
        timeout: 60_000
      })
      assert.strictEqual(result.status, 0, result.stdout)
      assert.include(result.stdout, "\r\u001b[2K[")
      assert.match(result.stdout, /\[#{30}\] 100% .* 3000 rows read, 3000 nodes, 0 relationships loaded\r?\n/)
      assert.include(result.stdout, `graph ${g}: 3000 nodes, 0 relationships`)
      assert.notInclude(result.stdout, "loaded 1 command")
    } finally {
      cli(["graphs", "delete", g])
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("the password is never printed, from a flag, the environment or the URL", () => {
    const secret = "s3cret-Pa55"
    const target = new URL(url!)
    const viaFlag = cli(["graphs", "list", "--password", secret])
    assert.strictEqual(viaFlag.code, 1)
    assert.notInclude(viaFlag.stdout + viaFlag.stderr, secret)
    const viaEnv = cli(["graphs", "list"], { FALKORDB_PASSWORD: secret })
    assert.strictEqual(viaEnv.code, 1)
    assert.notInclude(viaEnv.stdout + viaEnv.stderr, secret)
    target.password = secret
    const viaUrl = cli(["graphs", "list", "--url", target.toString()])
    assert.strictEqual(viaUrl.code, 1)
    assert.notInclude(viaUrl.stdout + viaUrl.stderr, secret)
    assert.include(viaUrl.stderr, "hint:")
  })

  it("migrate: a folder's migrations in id order, each once; a failing one named and not recorded", () => {
    const g = graph("migrate")
    const dir = tmp({
      "1_people.cypher": "CREATE (:Person {name: 'Ada'});\nCREATE (:Person {name: 'Alan'})\n",
      "2_index.cypher": "CREATE INDEX FOR (p:Person) ON (p.name)\n"
    })
    try {
      const first = cli(["migrate", "-g", g, dir])
      assert.strictEqual(first.code, 0, first.stderr)
      assert.strictEqual(first.stdout, "applied 1_people\napplied 2_index\n")
      const again = cli(["migrate", "-g", g, dir])
      assert.strictEqual(again.stdout, "nothing to apply\n")
      Fs.writeFileSync(Path.join(dir, "3_broken.cypher"), "MATCH (n RETURN n\n")
      const broken = cli(["migrate", "-g", g, dir])
      assert.strictEqual(broken.code, 1)
      assert.include(broken.stderr, "3")
      assert.include(broken.stderr, "broken")
      assert.include(broken.stderr, "hint:")
      const count = cli(["query", "-g", g, "MATCH (p:Person) RETURN count(p) AS n", "-f", "csv"])
      assert.strictEqual(count.stdout, "n\n2\n")
    } finally {
      cli(["graphs", "delete", g])
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("info: the server, the module and the graph count", () => {
    const info = cli(["info"])
    assert.strictEqual(info.code, 0, info.stderr)
    assert.match(
      info.stdout,
      /^server: \d+\.\d+\.\d+\nfalkordb: \d+\.\d+\.\d+\ngraphs: \d+\nrunning queries: \d+\nwaiting queries: \d+\n$/
    )
  })
})
