import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The layout shows the architecture (CONTRIBUTING.md#layout): no import cycle
 * between modules, and no arrow that runs back up between layers. A layer is
 * a folder of src/ (lib, keys, limiter, orders, pets, api, middleware) or one
 * of the files at its top (api-error.ts, header-catalogue.ts, env.ts...). Type-only
 * imports count: they are dependencies too.
 */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:from|import)\s+"(\.[^"]+)"/g)].map((match) => normalize(join(dirname(file), match[1]!)) + ".ts");
}

const modules = new Map(sourceFiles("src").map((file) => [file, importsOf(file)]));
const layerOf = (file: string) => {
  const [top, ...rest] = relative("src", file).split("/");
  return rest.length > 0 ? top! : relative("src", file);
};

/** One cycle in the graph, as the path around it, or undefined. */
function findCycle(graph: Map<string, Set<string>>): string[] | undefined {
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === "done") return undefined;
    if (state.get(node) === "open") return [...path.slice(path.indexOf(node)), node];
    state.set(node, "open");
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(node, "done");
    return undefined;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return undefined;
}

describe("src's imports", () => {
  it("resolve to modules that exist", () => {
    for (const [file, imports] of modules) for (const target of imports) expect(modules.has(target), `${file} imports ${target}`).toBe(true);
  });

  it("have no cycle between modules", () => {
    const graph = new Map([...modules].map(([file, imports]) => [file, new Set(imports)]));
    expect(findCycle(graph)).toBeUndefined();
  });

  it("have no arrow back up between layers", () => {
    const graph = new Map<string, Set<string>>();
    for (const [file, imports] of modules) {
      const from = layerOf(file);
      const edges = graph.get(from) ?? new Set<string>();
      for (const target of imports) if (layerOf(target) !== from) edges.add(layerOf(target));
      graph.set(from, edges);
    }
    expect(findCycle(graph)).toBeUndefined();
  });

  it("keep state between requests only in isolate-memory.ts, which says what each entry holds and why sharing it is safe", () => {
    const keepsState = /^(?:export )?(?:let |var |const \w+ = new (?!Error|TextEncoder|TextDecoder|RegExp)\w+\()/m;
    expect(keepsState.test("const leases = new LeaseClient();")).toBe(true);
    const holders = [...modules.keys()].filter((file) => file !== "src/app/isolate-memory.ts" && keepsState.test(readFileSync(file, "utf8")));
    expect(holders).toEqual([]);
  });

  it("are checked by a search that does find a cycle", () => {
    expect(findCycle(new Map([["a", new Set(["b"])], ["b", new Set(["c"])], ["c", new Set(["a"])]]))).toEqual(["a", "b", "c", "a"]);
  });
});
