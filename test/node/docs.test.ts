import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { readEnvironment } from "../../scripts/lib/environments";
import { ERROR_STATUS } from "../../src/framework/api-error";
import { EXPOSED, HEADERS } from "../../src/framework/header-catalogue";
import { PLAN_LIMITS } from "../../src/account/plans";

/**
 * The docs say what the code does: their tables of error codes, plans,
 * headers and vars are checked against the source, and every relative link,
 * every #anchor, and every doc the code's comments cite, resolves.
 */
const DOCS = ["README.md", "CONTRIBUTING.md", "bench/README.md", "bench/HISTORY.md", ...markdownUnder("docs")];

function markdownUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? markdownUnder(path) : path.endsWith(".md") ? [path] : [];
  });
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (entry === "node_modules" || entry.endsWith(".d.ts")) return [];
    return statSync(path).isDirectory() ? sourceFiles(path) : /\.(tsx?|toml|sql)$/.test(path) ? [path] : [];
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, "")
    .replace(/[^\p{L}\p{N} -]/gu, "")
    .replace(/ /g, "-");

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => slug(match[1]!)));
}

/** Whether `target` (a path relative to `from`, with an optional #anchor) resolves. */
function resolves(from: string, target: string): string | undefined {
  const [path, anchor] = target.split("#") as [string, string | undefined];
  const file = path === "" ? from : normalize(join(dirname(from), path));
  if (!existsSync(file)) return `${target}: no file ${file}`;
  if (anchor !== undefined && file.endsWith(".md") && !anchorsOf(file).has(anchor))
    return `${target}: no heading #${anchor} in ${file}`;
  return undefined;
}

/** The rows of the first table whose header row is `header`, as cells. */
function tableRows(file: string, header: string): string[][] {
  const lines = readFileSync(file, "utf8").split("\n");
  const start = lines.findIndex((line) => line.trim() === header);
  if (start < 0) throw new Error(`${file} has no table headed ${header}`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .split("|")
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

const unquote = (cell: string) => cell.replace(/`/g, "");

describe("the docs", () => {
  it("are short where they are read first: the README", () => {
    expect(readFileSync("README.md", "utf8").split("\n").length).toBeLessThanOrEqual(250);
  });

  it("keep the performance page to what holds now; the log of runs is bench/HISTORY.md", () => {
    expect(readFileSync("docs/design/performance.md", "utf8").split("\n").length).toBeLessThanOrEqual(250);
  });

  it("have every relative link and #anchor resolve", () => {
    const broken = DOCS.flatMap((file) => {
      const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
      return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
        .map((match) => match[1]!)
        .filter((target) => !/^[a-z]+:/.test(target))
        .map((target) => resolves(file, target))
        .filter((problem) => problem !== undefined)
        .map((problem) => `${file}: ${problem}`);
    });
    expect(broken).toEqual([]);
  });

  it("name only files that exist", () => {
    const missing = DOCS.flatMap((file) =>
      [
        ...readFileSync(file, "utf8").matchAll(
          /`((?:src|web|test|scripts|bench|client|migrations)\/[\w./-]+\.(?:tsx|ts|sql|toml|json))`/g,
        ),
      ]
        .map((match) => match[1]!)
        .filter((path) => !existsSync(path))
        .map((path) => `${file}: ${path}`),
    );
    expect(missing).toEqual([]);
  });

  it("are what the code's comments cite, each at a section that exists", () => {
    const citations = [
      ...sourceFiles("src"),
      ...sourceFiles("web"),
      ...sourceFiles("scripts"),
      ...sourceFiles("bench"),
      ...sourceFiles("test"),
      "wrangler.jsonc",
    ].flatMap((file) =>
      [
        ...readFileSync(file, "utf8").matchAll(
          /\b((?:docs\/[\w/.-]+|CONTRIBUTING|bench\/README|bench\/HISTORY)\.md(?:#[\w-]+)?)/g,
        ),
      ].map((match) => ({ file, target: match[1]! })),
    );
    expect(citations.length).toBeGreaterThan(20);
    const broken = citations
      .map(({ file, target }) => resolves("README.md", target) && `${file}: ${target}`)
      .filter(Boolean);
    expect(broken).toEqual([]);
    const stale = [...sourceFiles("src"), ...sourceFiles("scripts")].filter((file) =>
      /README, "/.test(readFileSync(file, "utf8")),
    );
    expect(stale).toEqual([]);
  });

  it("state as current only the versions of the dependencies the project installs (run records aside)", () => {
    const manifest = JSON.parse(readFileSync("package.json", "utf8")) as Record<string, Record<string, string>>;
    const names = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies });
    const installed = (name: string) =>
      (JSON.parse(readFileSync(join("node_modules", name, "package.json"), "utf8")) as { version: string }).version;
    const records = ["docs/design/performance.md", "bench/README.md", "bench/HISTORY.md"];
    const stated = DOCS.filter((doc) => !records.includes(doc)).flatMap((doc) =>
      names.flatMap((name) => {
        const escaped = name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
        const mention = new RegExp(`(?<![\\w/@-])${escaped}(?:@|\\s)v?(\\d+\\.\\d+(?:\\.\\d+)?(?:-[\\w.]+)?)`, "g");
        return [...readFileSync(doc, "utf8").matchAll(mention)].map((match) => ({ doc, name, version: match[1]! }));
      }),
    );
    const stale = stated.filter(({ name, version }) => !installed(name).startsWith(version));
    expect(stale).toEqual([]);
  });

  it("list exactly the error codes of the code's table, each with its status", () => {
    const rows = tableRows("docs/api.md", "| status | code | when |").map(([status, code]) => [
      unquote(code!),
      Number(status),
    ]);
    expect(Object.fromEntries(rows)).toEqual(ERROR_STATUS);
    expect(rows).toHaveLength(Object.keys(ERROR_STATUS).length);
  });

  it("list exactly the plans and limits of the code's table", () => {
    const rows = tableRows("docs/api.md", "| Plan | Per minute | Per day |");
    const number = (cell: string) => Number(cell.replace(/,/g, ""));
    const documented = Object.fromEntries(
      rows
        .filter(([plan]) => plan !== "enterprise")
        .map(([plan, perMinute, perDay]) => [plan, { perMinute: number(perMinute!), perDay: number(perDay!) }]),
    );
    expect(documented).toEqual(PLAN_LIMITS);
    expect(rows.map(([plan]) => plan)).toContain("enterprise");
  });

  it("list exactly the headers of the code's catalogue, with where each goes", () => {
    const rows = tableRows(
      "docs/api.md",
      "| Header | On every response | Readable by browser code | Sent by clients |",
    );
    const yes = (cell: string) => cell === "yes";
    const documented = Object.fromEntries(
      rows.map(([name, always, exposed, sent]) => [
        unquote(name!),
        { always: yes(always!), exposed: yes(exposed!), request: yes(sent!) },
      ]),
    );
    const catalogue = Object.fromEntries(
      Object.entries(HEADERS).map(([name, spec]) => {
        const flags = spec as { always?: true; exposed?: true; request?: true };
        return [
          name,
          { always: flags.always === true, exposed: flags.exposed === true, request: flags.request === true },
        ];
      }),
    );
    expect(documented).toEqual(catalogue);
  });

  it("name, in the CORS prose, exactly the headers browser code may read", () => {
    const prose = /^\*\*CORS\.\*\*[\s\S]*?\n\n/m.exec(readFileSync("docs/api.md", "utf8"))?.[0] ?? "";
    const sentence = /`Access-Control-Expose-Headers`\s+lists([^.]*)\./.exec(prose)?.[1] ?? "";
    const named = [...sentence.matchAll(/`([\w-]+)`/g)].map((match) => match[1]!);
    expect(named.sort()).toEqual([...EXPOSED].sort());
  });

  it("list exactly the vars every environment has", () => {
    const rows = tableRows("docs/operations.md", "| var | rule |");
    const documented = rows.flatMap(([names]) => [...names!.matchAll(/`(\w+)`/g)].map((match) => match[1]!)).sort();
    expect(documented).toEqual(Object.keys(readEnvironment().vars).sort());
  });
});
