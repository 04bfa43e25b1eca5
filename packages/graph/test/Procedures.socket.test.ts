// Procedure calls and the typed algorithm helpers end to end over real sockets against the
// FalkorDB 4.18.11 recording `procedures` (see ./replay.ts for the request pairs: the client
// sends arguments as parameters where the recording has literals).
import { assert, describe, it } from "@effect/vitest"
import { serverMessageOf } from "./helpers.ts"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Algorithms from "../src/Algorithms.ts"
import * as Procedures from "../src/Procedures.ts"
import { Edge, Node, Path } from "../src/Value.ts"
import { type Command, withReplay } from "./support/replay.ts"

const g = "procedures"
const ro = (text: string): Command => ["GRAPH.RO_QUERY", g, text, "--compact"]
const q = (text: string): Command => ["GRAPH.QUERY", g, text, "--compact"]

describe("Procedures over recorded replies (procedures)", () => {
  it.live("typed BFS and SPpaths with node arguments bound by id", () =>
    Effect.gen(function* () {
      const run = yield* withReplay(
        g,
        (db) =>
          Effect.gen(function* () {
            const algorithms = Algorithms.make(db.graph(g))
            const bfs = yield* algorithms.bfs({ source: 0, maxLevel: 10, relationshipType: "ROAD" })
            const paths = yield* Stream.runCollect(
              algorithms.shortestPaths({ source: 0, target: 3, relationshipTypes: ["ROAD"], weightProperty: "km" })
            )
            return { bfs, paths }
          }),
        {
          translations: [
            [
              ro(
                "CYPHER `n0id`=0 `a0`=10 `a1`='ROAD' MATCH (n0) WHERE id(n0) = $n0id CALL algo.BFS(n0, $a0, $a1) YIELD nodes, edges RETURN nodes, edges"
              ),
              ro("MATCH (a:City {name:'A'}) CALL algo.BFS(a, 10, 'ROAD') YIELD nodes, edges RETURN nodes, edges")
            ],
            [
              ro(
                "CYPHER `n0id`=0 `n1id`=3 `a0`=['ROAD'] `a1`='km' MATCH (n0), (n1) WHERE id(n0) = $n0id AND id(n1) = $n1id CALL algo.SPpaths({sourceNode: n0, targetNode: n1, relTypes: $a0, weightProp: $a1}) YIELD path, pathWeight RETURN path, pathWeight"
              ),
              ro(
                "MATCH (a:City {name:'A'}), (d:City {name:'D'}) CALL algo.SPpaths({sourceNode: a, targetNode: d, relTypes: ['ROAD'], weightProp: 'km'}) YIELD path, pathWeight RETURN path, pathWeight ORDER BY pathWeight"
              )
            ]
          ]
        }
      )
      assert.deepStrictEqual(run.unrecorded, [])
      assert.deepStrictEqual(run.unusedTranslations, [])
      const { bfs, paths } = run.value
      assert.deepStrictEqual(
        bfs.nodes.map((n) => [n.labels, n.properties.name]),
        [
          [["City"], "B"],
          [["City"], "C"],
          [["City"], "D"]
        ]
      )
      assert.isTrue(bfs.edges.every((e) => e instanceof Edge && e.relationshipType === "ROAD"))
      assert.strictEqual(bfs.edges.length, 3)
      assert.strictEqual(paths.length, 1)
      const [best] = paths
      assert.instanceOf(best!.path, Path)
      assert.deepStrictEqual(
        best!.path.nodes.map((n: Node) => n.properties.name),
        ["A", "B", "C", "D"]
      )
      assert.strictEqual(best!.pathWeight, 4.5)
    })
  )

  it.live("calls with YIELD and a projection: SSpaths, pageRank, WCC, betweenness, labelPropagation", () =>
    Effect.gen(function* () {
      const run = yield* withReplay(
        g,
        (db) =>
          Effect.gen(function* () {
            const procedures = Procedures.make(db.graph(g))
            const rows = (
              procedure: string,
              args: ReadonlyArray<Procedures.Argument>,
              y: Array<string>,
              returns: string
            ) =>
              Effect.map(procedures.call(procedure, args, { yield: y, returns }), (r) =>
                r.rows.map((row) => row.toObject())
              )
            return {
              ss: yield* rows(
                "algo.SSpaths",
                [{ sourceNode: Procedures.nodeId(0), relTypes: ["ROAD"], weightProp: "km", maxLen: 3 }],
                ["path", "pathWeight"],
                "pathWeight, length(path) AS hops ORDER BY pathWeight"
              ),
              rank: yield* rows(
                "algo.pageRank",
                ["City", "ROAD"],
                ["node", "score"],
                "node.name AS name, score ORDER BY name"
              ),
              wcc: yield* rows(
                "algo.WCC",
                [null],
                ["node", "componentId"],
                "node.name AS name, componentId ORDER BY name"
              ),
              betweenness: yield* rows(
                "algo.betweenness",
                [null],
                ["node", "score"],
                "node.name AS name, score ORDER BY name"
              ),
              communities: yield* rows(
                "algo.labelPropagation",
                [null],
                ["node", "communityId"],
                "node.name AS name, communityId ORDER BY name"
              )
            }
          }),
        {
          translations: [
            [
              ro(
                "CYPHER `n0id`=0 `a0`=['ROAD'] `a1`='km' `a2`=3 MATCH (n0) WHERE id(n0) = $n0id CALL algo.SSpaths({sourceNode: n0, relTypes: $a0, weightProp: $a1, maxLen: $a2}) YIELD path, pathWeight RETURN pathWeight, length(path) AS hops ORDER BY pathWeight"
              ),
              ro(
                "MATCH (a:City {name:'A'}) CALL algo.SSpaths({sourceNode: a, relTypes: ['ROAD'], weightProp: 'km', maxLen: 3}) YIELD path, pathWeight RETURN pathWeight, length(path) AS hops ORDER BY pathWeight"
              )
            ],
            [
              ro(
                "CYPHER `a0`='City' `a1`='ROAD' CALL algo.pageRank($a0, $a1) YIELD node, score RETURN node.name AS name, score ORDER BY name"
              ),
              ro("CALL algo.pageRank('City', 'ROAD') YIELD node, score RETURN node.name AS name, score ORDER BY name")
            ],
            [
              ro(
                "CYPHER `a0`=null CALL algo.WCC($a0) YIELD node, componentId RETURN node.name AS name, componentId ORDER BY name"
              ),
              ro("CALL algo.WCC(NULL) YIELD node, componentId RETURN node.name AS name, componentId ORDER BY name")
            ],
            [
              ro(
                "CYPHER `a0`=null CALL algo.betweenness($a0) YIELD node, score RETURN node.name AS name, score ORDER BY name"
              ),
              ro("CALL algo.betweenness(NULL) YIELD node, score RETURN node.name AS name, score ORDER BY name")
            ],
            [
              ro(
                "CYPHER `a0`=null CALL algo.labelPropagation($a0) YIELD node, communityId RETURN node.name AS name, communityId ORDER BY name"
              ),
              ro(
                "CALL algo.labelPropagation(NULL) YIELD node, communityId RETURN node.name AS name, communityId ORDER BY name"
              )
            ]
          ]
        }
      )
      assert.deepStrictEqual(run.unrecorded, [])
      assert.deepStrictEqual(run.unusedTranslations, [])
      const v = run.value
      assert.deepStrictEqual(v.ss, [{ pathWeight: 1, hops: 1 }])
      assert.deepStrictEqual(
        v.rank.map((r) => r.name),
        ["A", "B", "C", "D", "E"]
      )
      assert.closeTo(v.rank[3]!.score as number, 0.314572930335999, 1e-12)
      assert.deepStrictEqual(
        v.wcc.map((r) => [r.name, r.componentId]),
        [
          ["A", 0],
          ["B", 0],
          ["C", 0],
          ["D", 0],
          ["E", 4],
          ["X", 5]
        ]
      )
      assert.deepStrictEqual(
        v.betweenness.map((r) => r.score),
        [0, 0, 3, 0, 0, 0]
      )
      assert.deepStrictEqual(
        v.communities.map((r) => r.communityId),
        [0, 0, 0, 0, 4, 5]
      )
    })
  )

  it.live("db.meta.stats, dbms.procedures, dbms.functions and the recorded errors", () =>
    Effect.gen(function* () {
      const run = yield* withReplay(
        g,
        (db) =>
          Effect.gen(function* () {
            const graph = db.graph(g)
            const algorithms = Algorithms.make(graph)
            const procedures = Procedures.make(graph)
            return {
              stats: yield* algorithms.metaStats(),
              procs: yield* algorithms.procedures(),
              functionCount: yield* procedures.call("dbms.functions", [], {
                yield: ["name"],
                returns: "count(name) AS n"
              }),
              unknown: yield* Effect.flip(graph.call("db.nosuch")),
              arity: yield* Effect.flip(procedures.call("algo.pageRank", [1, 2, 3], { yield: ["node"] })),
              output: yield* Effect.flip(procedures.call("algo.pageRank", ["City", "ROAD"], { yield: ["nosuch"] })),
              fulltext: yield* procedures.call("db.idx.fulltext.createNodeIndex", ["City", "name"], {
                readOnly: false
              }),
              aliased: yield* procedures.call("db.labels", [], { yield: [["label", "l"]], where: "l STARTS WITH 'C'" }),
              found: yield* procedures.call("db.idx.fulltext.queryNodes", ["City", "B"], {
                yield: ["node", "score"],
                returns: "node.name AS name, score"
              }),
              badName: yield* Effect.flip(procedures.call("db.labels() RETURN 1 //")),
              badColumn: yield* Effect.flip(procedures.call("db.labels", [], { yield: ["a`b"] }))
            }
          }),
        {
          translations: [
            [
              ro("CALL dbms.procedures() YIELD name, mode RETURN name, mode"),
              ro("CALL dbms.procedures() YIELD name, mode RETURN name, mode ORDER BY name")
            ],
            [
              ro("CYPHER `a0`=1 `a1`=2 `a2`=3 CALL algo.pageRank($a0, $a1, $a2) YIELD node RETURN node"),
              ro("CALL algo.pageRank(1, 2, 3) YIELD node RETURN node")
            ],
            [
              ro("CYPHER `a0`='City' `a1`='ROAD' CALL algo.pageRank($a0, $a1) YIELD nosuch RETURN nosuch"),
              ro("CALL algo.pageRank('City', 'ROAD') YIELD nosuch RETURN nosuch")
            ],
            [
              q("CYPHER `a0`='City' `a1`='name' CALL db.idx.fulltext.createNodeIndex($a0, $a1)"),
              q("CALL db.idx.fulltext.createNodeIndex('City', 'name')")
            ],
            [
              ro(
                "CYPHER `a0`='City' `a1`='B' CALL db.idx.fulltext.queryNodes($a0, $a1) YIELD node, score RETURN node.name AS name, score"
              ),
              ro("CALL db.idx.fulltext.queryNodes('City', 'B') YIELD node, score RETURN node.name AS name, score")
            ]
          ]
        }
      )
      assert.deepStrictEqual(run.unrecorded, [])
      assert.deepStrictEqual(run.unusedTranslations, [])
      const v = run.value
      assert.deepStrictEqual(run.sent[0], ro("CALL db.meta.stats()"))
      assert.deepStrictEqual(
        { ...v.stats, labels: { ...v.stats.labels }, relTypes: { ...v.stats.relTypes } },
        {
          labels: { City: 5, Island: 1 },
          relTypes: { ROAD: 4 },
          relCount: 4,
          nodeCount: 6,
          labelCount: 2,
          relTypeCount: 1,
          propertyKeyCount: 3
        }
      )
      assert.strictEqual(v.procs.length, 24)
      assert.deepStrictEqual(v.procs[0], { name: "algo.BFS", mode: "READ" })
      assert.strictEqual(v.functionCount.rows[0]!.get("n"), 144)
      assert.strictEqual(v.unknown.reason._tag, "UnknownProcedure")
      assert.strictEqual(serverMessageOf(v.unknown), "Procedure `db.nosuch` is not registered")
      assert.strictEqual(v.arity.reason._tag, "ProcedureArguments")
      assert.strictEqual(serverMessageOf(v.arity), "Procedure `algo.pageRank` requires 2 arguments, got 3")
      assert.strictEqual(v.output.reason._tag, "UnknownOutput")
      assert.strictEqual(serverMessageOf(v.output), "Procedure `algo.pageRank` does not yield output `nosuch`")
      assert.strictEqual(v.fulltext.statistics.indicesCreated, 1)
      assert.deepStrictEqual(
        v.found.rows.map((r) => r.toObject()),
        [{ name: "B", score: 2 }]
      )
      // YIELD … AS and WHERE: sent exactly as recorded.
      assert.deepStrictEqual(
        v.aliased.rows.map((r) => r.get("l")),
        ["City"]
      )
      assert.isTrue(run.sent.some((c) => c[2] === "CALL db.labels() YIELD label AS l WHERE l STARTS WITH 'C' RETURN l"))
      assert.strictEqual(v.badName.reason._tag, "InvalidIdentifier")
      assert.strictEqual(v.badColumn.reason._tag, "InvalidIdentifier")
      assert.strictEqual(run.sent.length, 9)
    })
  )
})

describe("Procedure query texts", () => {
  it("typed values are rebuilt from plain parameters and nodes are bound by id", () => {
    const query = Procedures.callQuery("db.idx.vector.queryNodes", ["Doc", "emb", 3, new Float32Array([1, 0.5, 1])], {
      yield: ["node", "score"]
    })
    assert.strictEqual(
      query.text,
      "CALL db.idx.vector.queryNodes($a0, $a1, $a2, vecf32($a3)) YIELD node, score RETURN node, score"
    )
    assert.deepStrictEqual(query.parameters, { a0: "Doc", a1: "emb", a2: 3, a3: [1, 0.5, 1] })
    const withNode = Procedures.callQuery("algo.BFS", [new Node(7, ["City"], {}), 2, null], { yield: ["nodes"] })
    assert.strictEqual(
      withNode.text,
      "MATCH (n0) WHERE id(n0) = $n0id CALL algo.BFS(n0, $a0, $a1) YIELD nodes RETURN nodes"
    )
    assert.throws(() => Procedures.callQuery("algo.BFS", [Procedures.nodeId(1)]), /YIELD/)
  })
})
