import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The layout shows the architecture (CONTRIBUTING.md#layout): no import cycle
 * between modules, and every import between rooms (the folders of src/) runs
 * down the declared order of layers below. Type-only imports count: they are
 * dependencies too.
 */

/** The layers of src/, bottom first: a room imports only from rooms on a lower layer (CONTRIBUTING.md#layout). */
const LAYERS: readonly (readonly string[])[] = [
  ["lib"],
  ["framework"],
  ["account", "read-your-writes", "pets"],
  ["keys", "orders"],
  ["usage", "events", "idempotency"],
  ["webhook-delivery", "console-kit"],
  ["webhooks", "operator", "console"],
  ["revocation"],
  ["app"],
];
/**
 * The consoles' pages (web/: each console, and the kit both draw with) are programs of their own: they run in the
 * browser, bundled by scripts/build-assets.ts, and call the worker only over HTTP.
 */
const CONSOLES = ["web/console", "web/operator"];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? sourceFiles(path) : /\.tsx?$/.test(path) ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:from|import)\s+"(\.[^"]+)"/g)].map(
    (match) => `${normalize(join(dirname(file), match[1]!))}.ts`,
  );
}

const modules = new Map(sourceFiles("src").map((file) => [file, importsOf(file)]));
const roomOf = (file: string) => {
  const [top, ...rest] = relative("src", file).split("/");
  return rest.length > 0 ? top! : relative("src", file);
};

/** A call into the Account over RPC (its stub, the limiter's): a reader opens its class for the method called. */
const CALLS_ACCOUNT = /accountStub\(|LimiterStub/;

/**
 * The value imports a reader follows from `start`, lib/ and framework/ aside (generic, read once), and the Account's
 * class where a stub is called (that file, not all it imports): files opened.
 */
function readerPath(start: string): string[] {
  const opened = new Set<string>();
  const open = (file: string) => {
    if (opened.has(file)) return;
    opened.add(file);
    const text = readFileSync(file, "utf8");
    if (CALLS_ACCOUNT.test(text)) opened.add("src/account/account.ts");
    const values = text.matchAll(/^(?:import|export) (?!type )[^;]*?from "(\.[^"]+)"/gm);
    for (const [, spec] of values) {
      const target = `${normalize(join(dirname(file), spec!))}.ts`;
      if (!["lib", "framework"].includes(roomOf(target))) open(target);
    }
  };
  open(start);
  return [...opened];
}

/** The imports between rooms that do not run down the layers: "from -> to". */
function upwardImports(
  graph: ReadonlyMap<string, readonly string[]>,
  layers: readonly (readonly string[])[],
): string[] {
  const floor = new Map(layers.flatMap((rooms, index) => rooms.map((room) => [room, index] as const)));
  const found: string[] = [];
  for (const [file, imports] of graph) {
    for (const target of imports) {
      const [from, to] = [roomOf(file), roomOf(target)];
      if (from !== to && !(floor.get(to)! < floor.get(from)!))
        found.push(`${from} -> ${to} (${file} imports ${target})`);
    }
  }
  return found;
}

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
    for (const [file, imports] of modules)
      for (const target of imports) expect(modules.has(target), `${file} imports ${target}`).toBe(true);
  });

  it("have no cycle between modules", () => {
    const graph = new Map([...modules].map(([file, imports]) => [file, new Set(imports)]));
    expect(findCycle(graph)).toBeUndefined();
  });

  it("place every room of src/ on a layer, and nothing loose but the entry's folder", () => {
    const rooms = new Set([...modules.keys()].map(roomOf));
    expect([...rooms].sort()).toEqual(LAYERS.flat().sort());
  });

  it("are the layers CONTRIBUTING.md's table shows, in its order, top first", () => {
    const section = readFileSync("CONTRIBUTING.md", "utf8").split("## Layout")[1]!.split("\n## ")[0]!;
    const rows = section.split("\n").filter((line) => /^\| \d+ \|/.test(line));
    const shown = rows.map((row) => [...row.split("|")[2]!.matchAll(/`src\/([\w-]+)\/`/g)].map((match) => match[1]!));
    expect(shown).toEqual([...LAYERS].reverse());
  });

  // 17 rooms: 75 arrows of the 136 possible pairs.
  it("stay a shallow house: at most 8 floors (the longest chain of rooms) and 75 arrows between rooms", () => {
    const arrows = new Map<string, Set<string>>();
    for (const [file, imports] of modules) {
      for (const target of imports)
        if (roomOf(target) !== roomOf(file))
          arrows.set(roomOf(file), (arrows.get(roomOf(file)) ?? new Set()).add(roomOf(target)));
    }
    const floor = new Map<string, number>();
    const floorOf = (room: string): number =>
      floor.get(room) ??
      (floor.set(room, 1 + Math.max(0, ...[...(arrows.get(room) ?? [])].map(floorOf))), floor.get(room)!);
    expect(Math.max(...[...new Set([...modules.keys()].map(roomOf))].map(floorOf))).toBeLessThanOrEqual(8);
    expect([...arrows.values()].reduce((sum, targets) => sum + targets.size, 0)).toBeLessThanOrEqual(75);
  });

  it("keep a reader's paths short: a 429 in 8 files of the account, a leaked key's revocation in 12 of 4 rooms", () => {
    const refusal = new Set([...readerPath("src/account/rate-limit.ts"), ...readerPath("src/account/lease-client.ts")]);
    expect([...refusal].map(roomOf)).toEqual(Array(refusal.size).fill("account"));
    expect(refusal.size).toBeLessThanOrEqual(8);
    // As GitHub reports it, and as an operator revokes it.
    for (const handler of ["report-leaked-tokens", "revoke-any-key"]) {
      const leak = readerPath(`src/revocation/${handler}.ts`);
      expect(leak.length, handler).toBeLessThanOrEqual(12);
      expect(new Set(leak.map(roomOf)).size, handler).toBeLessThanOrEqual(4);
    }
  });

  it("run down the layers: a room imports only from rooms below it", () => {
    expect(upwardImports(modules, LAYERS)).toEqual([]);
  });

  it("are checked by a rule that does find an import up the layers, or across one", () => {
    const planted = new Map([
      ["src/lib/int64.ts", ["src/framework/api-error.ts"]],
      ["src/keys/lookup.ts", ["src/orders/order-json.ts", "src/lib/digest.ts"]],
      ["src/app/worker.ts", ["src/keys/lookup.ts"]],
    ]);
    expect(upwardImports(planted, LAYERS)).toEqual([
      "lib -> framework (src/lib/int64.ts imports src/framework/api-error.ts)",
      "keys -> orders (src/keys/lookup.ts imports src/orders/order-json.ts)",
    ]);
  });

  it("keep state between requests only in isolate-memory.ts, which says what each entry holds and why sharing it is safe", () => {
    // A module-level let or var, or a const made with `new` (generic or not), but for values that hold no state: an
    // error, a coder, a pattern, the app itself, or a value typed read-only.
    const constants = "Error|TextEncoder|TextDecoder|RegExp|Hono\\b";
    const keepsState = new RegExp(
      `^(?:export )?(?:let |var |const \\w+(?::(?!\\s*Readonly)[^=]+)? = new (?!${constants})\\w+(?:<.*>)?\\()`,
      "m",
    );
    expect(keepsState.test("const leases = new LeaseClient();")).toBe(true);
    expect(keepsState.test("const written = new WeakMap<WindowReport, WrittenHeaders>();")).toBe(true);
    expect(keepsState.test("export const seen: Set<string> = new Set();")).toBe(true);
    expect(keepsState.test("const PATTERN = new RegExp(SOURCE);")).toBe(false);
    const holders = [...modules.keys()].filter(
      (file) => file !== "src/app/isolate-memory.ts" && keepsState.test(readFileSync(file, "utf8")),
    );
    expect(holders).toEqual([]);
  });

  it("leave the consoles' pages apart: no worker module imports web/, and web/ imports nothing of the worker's but the API's generated types", () => {
    expect([...modules].filter(([, imports]) => imports.some((target) => target.startsWith("web/")))).toEqual([]);
    const pages = sourceFiles("web");
    const outside = pages.flatMap((file) =>
      importsOf(file)
        .filter((target) => !target.startsWith("web/") && !target.endsWith(".css.ts"))
        .filter((target) => target !== "client/src/schema-v2.ts")
        .map((target) => `${file} imports ${target}`),
    );
    expect(pages.length).toBeGreaterThan(20);
    expect(outside).toEqual([]);
  });

  it("keep the two consoles peers: each page draws with the kit below it, and neither imports the other", () => {
    const across = CONSOLES.flatMap((page) =>
      sourceFiles(page)
        .flatMap((file) => importsOf(file).map((target) => [file, target] as const))
        .filter(([, target]) => CONSOLES.some((other) => other !== page && target.startsWith(other)))
        .map(([file, target]) => `${file} imports ${target}`),
    );
    expect(across).toEqual([]);
  });

  it("are checked by a search that does find a cycle", () => {
    expect(
      findCycle(
        new Map([
          ["a", new Set(["b"])],
          ["b", new Set(["c"])],
          ["c", new Set(["a"])],
        ]),
      ),
    ).toEqual(["a", "b", "c", "a"]);
  });
});
