/**
 * A small evaluator of Workers Analytics Engine's SQL, for the subset this project's queries use
 * (docs/operations.md#request-analytics and the release's health gate): one table; SELECT expressions with AS; WHERE;
 * GROUP BY; ORDER BY; LIMIT; FORMAT JSON; comparison, arithmetic, AND, OR, NOT, IN; `NOW()`, `INTERVAL 'n' UNIT`,
 * `toStartOfDay`, `toStartOfInterval`, `toUnixTimestamp`, `IF`, `SUM`, `count()`, `AVG`, `MAX`,
 * `quantileExactWeighted(level)(value, weight)` and its older spelling `quantileWeighted(level, value, weight)`.
 * Rows are the data points a recording stand-in of the binding kept, so the queries operators run are checked against
 * what the Worker writes. Anything outside the subset is an error, never a guess.
 *
 * Held to the real engine where Cloudflare documents it (developers.cloudflare.com/analytics/analytics-engine/:
 * sql-reference/statements/#format-clause, sql-api/, sql-reference/aggregate-functions/): the answer is
 * `{ meta: [{ name, type }], data, rows }`; `timestamp` is a DateTime and `_sample_interval` an integer. Where
 * Cloudflare's pages are silent, as the ClickHouse engine underneath writes JSON (clickhouse.com/docs/interfaces/
 * formats/JSON): 64-bit integers (count(), a SUM of integers) quoted as strings, DateTimes as `YYYY-MM-DD hh:mm:ss`
 * (UTC), floats as numbers. And what that engine refuses is refused here: a column neither aggregated nor grouped by,
 * an unknown column or function. An alias shadows a column of the same name, as there. MAX and the quantiles see the
 * stored rows: on a sampled dataset that is the sample, as the engine's answer is.
 */

/**
 * A stored data point as the engine's columns: index1, blob1.., double1.., timestamp (ms here; answered as a
 * DateTime), _sample_interval.
 */
export type EngineRow = Record<string, string | number>;

/** A data point as the binding took it, stamped when it was written. */
export function engineRow(point: AnalyticsEngineDataPoint, timestamp: number, sampleInterval = 1): EngineRow {
  const row: EngineRow = { timestamp, _sample_interval: sampleInterval, index1: String(point.indexes?.[0] ?? "") };
  point.blobs?.forEach((blob, i) => {
    row[`blob${i + 1}`] = blob === null ? "" : String(blob);
  });
  point.doubles?.forEach((double, i) => {
    row[`double${i + 1}`] = double;
  });
  return row;
}

type Value = string | number;
/** The engine's types of what a query answers, as `meta` names them. */
type EngineType = "String" | "Float64" | "UInt64" | "UInt32" | "UInt8" | "DateTime";
type Node =
  | { kind: "literal"; value: Value }
  | { kind: "column"; name: string }
  | { kind: "call"; name: string; params: Node[]; args: Node[] }
  | { kind: "binary"; op: string; left: Node; right: Node }
  | { kind: "not"; operand: Node }
  | { kind: "in"; operand: Node; list: Node[] };

interface Query {
  select: { expr: Node; name: string }[];
  table: string;
  where?: Node;
  groupBy: Node[];
  orderBy: { expr: Node; descending: boolean }[];
  limit?: number;
}

const UNIT_MS: Record<string, number> = { SECOND: 1_000, MINUTE: 60_000, HOUR: 3_600_000, DAY: 86_400_000 };
const AGGREGATES = new Set(["sum", "count", "avg", "max", "quantileexactweighted", "quantileweighted"]);

function tokenize(sql: string): string[] {
  const tokens: string[] = [];
  const pattern =
    /\s+|--[^\n]*|('(?:[^']|'')*')|(\d+(?:\.\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|(<=|>=|!=|<>|[-+*/(),=<>])|(.)/gy;
  for (let match = pattern.exec(sql); match && match.index < sql.length; match = pattern.exec(sql)) {
    if (match[5] !== undefined) throw new Error(`unexpected "${match[5]}" in the SQL`);
    const token = match[1] ?? match[2] ?? match[3] ?? match[4];
    if (token !== undefined) tokens.push(token);
  }
  return tokens;
}

function parse(sql: string): Query {
  const tokens = tokenize(sql);
  let at = 0;
  const peek = (word?: string) => (word === undefined ? tokens[at] : tokens[at]?.toUpperCase() === word);
  const take = (word?: string): string => {
    const token = tokens[at];
    if (token === undefined || (word !== undefined && token.toUpperCase() !== word))
      throw new Error(`expected ${word ?? "more"} at "${tokens.slice(at, at + 4).join(" ")}"`);
    at += 1;
    return token;
  };
  const list = <T>(item: () => T): T[] => {
    const items = [item()];
    while (peek(",")) take(","), items.push(item());
    return items;
  };
  const primary = (): Node => {
    const token = take();
    if (token === "(") {
      const inner = expression();
      take(")");
      return inner;
    }
    if (token === "-") return { kind: "binary", op: "-", left: { kind: "literal", value: 0 }, right: primary() };
    if (/^\d/.test(token)) return { kind: "literal", value: Number(token) };
    if (token.startsWith("'")) return { kind: "literal", value: token.slice(1, -1).replaceAll("''", "'") };
    if (token.toUpperCase() === "INTERVAL") {
      const amount = Number(take().replaceAll("'", ""));
      const unit = take().toUpperCase();
      if (!(unit in UNIT_MS) || !Number.isFinite(amount)) throw new Error(`unsupported INTERVAL ${amount} ${unit}`);
      return { kind: "literal", value: amount * UNIT_MS[unit]! };
    }
    if (peek("(")) {
      take("(");
      const first = peek(")") ? [] : list(expression);
      take(")");
      // f(params)(args): a parametric aggregate, such as quantileExactWeighted(0.99)(double2, _sample_interval).
      if (peek("(")) {
        take("(");
        const args = list(expression);
        take(")");
        return { kind: "call", name: token.toLowerCase(), params: first, args };
      }
      // The older spelling, quantileWeighted(level, value, weight), is the same function.
      if (token.toLowerCase() === "quantileweighted") {
        if (first.length !== 3) throw new Error("quantileWeighted takes (level, value, weight)");
        return { kind: "call", name: "quantileexactweighted", params: [first[0]!], args: first.slice(1) };
      }
      return { kind: "call", name: token.toLowerCase(), params: [], args: first };
    }
    return { kind: "column", name: token };
  };
  const binary =
    (next: () => Node, ops: string[]): (() => Node) =>
    () => {
      let left = next();
      while (ops.includes(tokens[at]?.toUpperCase() ?? ""))
        left = { kind: "binary", op: take().toUpperCase(), left, right: next() };
      return left;
    };
  const additive = binary(binary(primary, ["*", "/"]), ["+", "-"]);
  const comparison = (): Node => {
    const left = additive();
    if (peek("NOT") && tokens[at + 1]?.toUpperCase() === "IN") return (take(), { kind: "not", operand: inList(left) });
    if (peek("IN")) return inList(left);
    if (["=", "!=", "<>", "<", "<=", ">", ">="].includes(tokens[at] ?? ""))
      return { kind: "binary", op: take(), left, right: additive() };
    return left;
  };
  const inList = (operand: Node): Node => {
    take("IN");
    take("(");
    const items = list(expression);
    take(")");
    return { kind: "in", operand, list: items };
  };
  const negation = (): Node => (peek("NOT") ? (take(), { kind: "not", operand: negation() }) : comparison());
  const expression = binary(binary(negation, ["AND"]), ["OR"]);

  take("SELECT");
  const select = list(() => {
    const start = at;
    const expr = expression();
    return { expr, name: peek("AS") ? (take("AS"), take()) : tokens.slice(start, at).join("") };
  });
  take("FROM");
  const table = take();
  const query: Query = { select, table, groupBy: [], orderBy: [] };
  if (peek("WHERE")) take(), (query.where = expression());
  if (peek("GROUP")) take(), take("BY"), (query.groupBy = list(expression));
  if (peek("ORDER")) {
    take(), take("BY");
    query.orderBy = list(() => {
      const expr = expression();
      const descending = peek("DESC") === true;
      if (peek("DESC") || peek("ASC")) take();
      return { expr, descending };
    });
  }
  if (peek("LIMIT")) take(), (query.limit = Number(take()));
  if (peek("FORMAT")) take(), take("JSON");
  if (at !== tokens.length) throw new Error(`unsupported SQL from "${tokens.slice(at, at + 4).join(" ")}"`);
  return query;
}

const truthy = (value: Value) => value !== 0 && value !== "";
const number = (value: Value) => (typeof value === "number" ? value : Number(value));

function quantileExactWeighted(level: number, pairs: [number, number][]): number {
  const sorted = pairs.filter(([, weight]) => weight > 0).sort(([a], [b]) => a - b);
  const total = sorted.reduce((sum, [, weight]) => sum + weight, 0);
  if (total === 0) return 0;
  let seen = 0;
  for (const [value, weight] of sorted) if ((seen += weight) >= level * total) return value;
  return sorted.at(-1)![0];
}

/** Runs `sql` over `rows` (every row of the query's table) at `now` (ms); answers as the SQL API's FORMAT JSON does. */
export function runEngineSql(
  sql: string,
  rows: readonly EngineRow[],
  now: number,
): { meta: { name: string }[]; data: Record<string, Value>[]; rows: number } {
  const query = parse(sql);
  const aliases = new Map(query.select.map(({ expr, name }) => [name, expr]));
  const isAggregate = (node: Node): boolean =>
    node.kind === "call"
      ? AGGREGATES.has(node.name) || node.args.some(isAggregate)
      : node.kind === "binary"
        ? isAggregate(node.left) || isAggregate(node.right)
        : node.kind === "not"
          ? isAggregate(node.operand)
          : false;

  /** One row's value of `node`; over a group, aggregates see every row of it. */
  const evaluate = (node: Node, group: readonly EngineRow[]): Value => {
    const row = group[0] ?? {};
    switch (node.kind) {
      case "literal":
        return node.value;
      case "column": {
        // An alias shadows the column of its name (the engine's rule), but for an alias of that very column.
        const alias = aliases.get(node.name);
        if (alias && !(alias.kind === "column" && alias.name === node.name)) return evaluate(alias, group);
        if (node.name in row) return row[node.name]!;
        if (isColumn(node.name)) return node.name.startsWith("double") ? 0 : "";
        throw new Error(`Unknown identifier: ${node.name}`);
      }
      case "not":
        return truthy(evaluate(node.operand, group)) ? 0 : 1;
      case "in": {
        const value = evaluate(node.operand, group);
        return node.list.some((item) => evaluate(item, group) === value) ? 1 : 0;
      }
      case "binary": {
        const left = evaluate(node.left, group);
        if (node.op === "AND") return truthy(left) ? (truthy(evaluate(node.right, group)) ? 1 : 0) : 0;
        if (node.op === "OR") return truthy(left) ? 1 : truthy(evaluate(node.right, group)) ? 1 : 0;
        const right = evaluate(node.right, group);
        const compare =
          typeof left === "string" || typeof right === "string"
            ? String(left).localeCompare(String(right))
            : left - right;
        switch (node.op) {
          case "+":
            return number(left) + number(right);
          case "-":
            return number(left) - number(right);
          case "*":
            return number(left) * number(right);
          case "/":
            return number(left) / number(right);
          case "=":
            return compare === 0 ? 1 : 0;
          case "!=":
          case "<>":
            return compare !== 0 ? 1 : 0;
          case "<":
            return compare < 0 ? 1 : 0;
          case "<=":
            return compare <= 0 ? 1 : 0;
          case ">":
            return compare > 0 ? 1 : 0;
          case ">=":
            return compare >= 0 ? 1 : 0;
        }
        throw new Error(`unsupported operator ${node.op}`);
      }
      case "call": {
        const each = (arg: Node) => group.map((member) => number(evaluate(arg, [member])));
        switch (node.name) {
          case "now":
            return now;
          case "todatetime":
            return number(evaluate(node.args[0]!, group)) * 1000;
          case "tostartofday":
            return Math.floor(number(evaluate(node.args[0]!, group)) / UNIT_MS.DAY!) * UNIT_MS.DAY!;
          case "tostartofinterval": {
            const size = number(evaluate(node.args[1]!, group));
            return Math.floor(number(evaluate(node.args[0]!, group)) / size) * size;
          }
          // A DateTime (ms here) as whole seconds since 1970, as the engine answers it.
          case "tounixtimestamp":
            return Math.floor(number(evaluate(node.args[0]!, group)) / 1000);
          case "if":
            return truthy(evaluate(node.args[0]!, group))
              ? evaluate(node.args[1]!, group)
              : evaluate(node.args[2]!, group);
          case "sum":
            return each(node.args[0]!).reduce((sum, value) => sum + value, 0);
          case "count":
            return group.length;
          case "max":
            return Math.max(...each(node.args[0]!));
          case "avg":
            return each(node.args[0]!).reduce((sum, value) => sum + value, 0) / group.length;
          case "quantileexactweighted": {
            const values = each(node.args[0]!);
            const weights = each(node.args[1]!);
            return quantileExactWeighted(
              number(evaluate(node.params[0]!, group)),
              values.map((value, i) => [value, weights[i]!]),
            );
          }
        }
        throw new Error(`unsupported function ${node.name}`);
      }
    }
  };

  /** The column an expression reads that is neither aggregated nor what the query groups by, if any. */
  const grouped = new Set(query.groupBy.map((expr) => JSON.stringify(resolve(expr))));
  const ungrouped = (node: Node): string | undefined => {
    if (grouped.has(JSON.stringify(resolve(node)))) return undefined;
    const resolved = resolve(node);
    switch (resolved.kind) {
      case "column":
        return resolved.name;
      case "call":
        return AGGREGATES.has(resolved.name) ? undefined : resolved.args.map(ungrouped).find(Boolean);
      case "binary":
        return ungrouped(resolved.left) ?? ungrouped(resolved.right);
      case "not":
        return ungrouped(resolved.operand);
      case "in":
        return [resolved.operand, ...resolved.list].map(ungrouped).find(Boolean);
      case "literal":
        return undefined;
    }
  };
  /** An alias read as what it stands for. */
  function resolve(node: Node): Node {
    if (node.kind !== "column") return node;
    const alias = aliases.get(node.name);
    return alias && !(alias.kind === "column" && alias.name === node.name) ? resolve(alias) : node;
  }

  const aggregatedQuery = query.groupBy.length > 0 || query.select.some(({ expr }) => isAggregate(expr));
  if (aggregatedQuery) {
    for (const { expr } of [...query.select, ...query.orderBy]) {
      const column = ungrouped(expr);
      if (column !== undefined)
        throw new Error(`Column \`${column}\` is not under aggregate function and not in GROUP BY`);
    }
  }

  const kept = rows.filter((row) => !query.where || truthy(evaluate(query.where, [row])));
  const aggregated = aggregatedQuery;
  const groups = new Map<string, EngineRow[]>();
  if (aggregated) {
    for (const row of kept) {
      const key = JSON.stringify(query.groupBy.map((expr) => evaluate(expr, [row])));
      groups.set(key, [...(groups.get(key) ?? []), row]);
    }
    if (query.groupBy.length === 0 && groups.size === 0) groups.set("[]", []);
  }
  const units = aggregated ? [...groups.values()] : kept.map((row) => [row]);
  const ordered = units
    .map((group) => ({ group, sortKeys: query.orderBy.map(({ expr }) => evaluate(expr, group)) }))
    .sort((a, b) => {
      for (const [i, { descending }] of query.orderBy.entries()) {
        const [x, y] = [a.sortKeys[i]!, b.sortKeys[i]!];
        const order = typeof x === "string" || typeof y === "string" ? String(x).localeCompare(String(y)) : x - y;
        if (order !== 0) return descending ? -order : order;
      }
      return 0;
    })
    .slice(0, query.limit ?? Infinity);
  const types = query.select.map(({ expr }) => typeOf(resolve(expr), (name) => aliases.get(name)));
  const data = ordered.map(({ group }) =>
    Object.fromEntries(query.select.map(({ expr, name }, i) => [name, written(evaluate(expr, group), types[i]!)])),
  );
  return { meta: query.select.map(({ name }, i) => ({ name, type: types[i]! })), data, rows: data.length };
}

const isColumn = (name: string) => /^(blob|double)\d+$|^index1$|^timestamp$|^_sample_interval$/.test(name);

/** The type the engine gives an expression (ClickHouse's rules, for this subset). */
function typeOf(node: Node, aliasOf: (name: string) => Node | undefined): EngineType {
  const of = (inner: Node) => typeOf(inner, aliasOf);
  switch (node.kind) {
    case "literal":
      return typeof node.value === "string" ? "String" : Number.isInteger(node.value) ? "UInt8" : "Float64";
    case "column": {
      const alias = aliasOf(node.name);
      if (alias && !(alias.kind === "column" && alias.name === node.name)) return of(alias);
      if (node.name === "timestamp") return "DateTime";
      if (node.name === "_sample_interval") return "UInt32";
      return node.name.startsWith("double") ? "Float64" : "String";
    }
    case "not":
    case "in":
      return "UInt8";
    case "binary":
      if (["=", "!=", "<>", "<", "<=", ">", ">=", "AND", "OR"].includes(node.op)) return "UInt8";
      if (node.op === "/" || of(node.left) === "Float64" || of(node.right) === "Float64") return "Float64";
      return of(node.left) === "DateTime" ? "DateTime" : "UInt64";
    case "call":
      switch (node.name) {
        case "now":
        case "todatetime":
        case "tostartofday":
        case "tostartofinterval":
          return "DateTime";
        case "tounixtimestamp":
          return "UInt32";
        case "count":
          return "UInt64";
        case "sum":
          return of(node.args[0]!) === "Float64" ? "Float64" : "UInt64";
        case "avg":
        case "quantileexactweighted":
          return "Float64";
        case "max":
          return of(node.args[0]!);
        case "if": {
          const [then, otherwise] = [of(node.args[1]!), of(node.args[2]!)];
          return then === "Float64" || otherwise === "Float64" ? "Float64" : then === "UInt8" ? otherwise : then;
        }
      }
      throw new Error(`Unknown function ${node.name}`);
  }
}

/** A value as FORMAT JSON writes it: 64-bit integers quoted, DateTimes as UTC text, the rest as they are. */
function written(value: Value, type: EngineType): Value {
  if (type === "UInt64") return String(Math.round(Number(value)));
  if (type === "DateTime") return new Date(Number(value)).toISOString().slice(0, 19).replace("T", " ");
  return value;
}

/** The table a query reads, for a stand-in that holds several. */
export const tableOf = (sql: string) => parse(sql).table;
