import { beforeAll, describe, expect, it } from "vitest";
import { existsSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { startService, tempStateDir } from "../../scripts/lib/local-service";
import { runKeys, useKeysCommand } from "../support/npm-script";
import { useSharedService } from "../support/service-fixture";

describe("npm run keys, against the running service", () => {
  const service = useSharedService();
  // The command itself, in this process: the first test runs the real `npm run keys`, the rest call the same code.
  const keys = useKeysCommand(() => service.statePath);

  const runKeysCommandIn = (stateDir: string, ...args: string[]) => useKeysCommand(() => stateDir).run(...args);
  const listWith = (key: string) =>
    service.current.call("/v1/store/orders", { headers: { Authorization: `Bearer ${key}` } });

  it("create --json prints exactly one JSON line, and the key works in the next request", async () => {
    const result = await runKeys(service.statePath, "create", "--plan", "free", "--json");
    expect(result.status, result.stderr).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const created = JSON.parse(lines[0]);
    expect(Object.keys(created).sort()).toEqual(["id", "key", "plan"]);
    expect(created).toMatchObject({ id: expect.stringMatching(/^key_[0-9A-Za-z]{16}$/), plan: "free" });
    expect(created.key).toMatch(/^so_test_[0-9A-Za-z]{38}$/);

    expect((await listWith(created.key)).status).toBe(200);
    // It says what it means and nothing a user must learn to ignore: no wrangler or workerd warning about the Worker's
    // Durable Objects, no alarm scheduler's stack trace (the state the service runs on has lanes' alarms stored).
    expect(result.stderr).toBe("");
  });

  it("list, as the process a user runs, prints the keys and nothing else", async () => {
    const listed = await runKeys(service.statePath, "list");
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stderr).toBe("");
    expect(listed.stdout).not.toMatch(/warning|Durable Object|no such actor/i);
    expect(listed.stdout).toMatch(/^key_[0-9A-Za-z]{16}\s/m);
  });

  it("create, list, show and revoke a key; the service then refuses it", async () => {
    const created = await keys.run(
      "create",
      "--plan",
      "enterprise",
      "--per-minute",
      "500",
      "--per-day",
      "9000",
      "--name",
      "Acme",
    );
    expect(created.status, created.stderr).toBe(0);
    const key = /so_test_[0-9A-Za-z]{38}/.exec(created.stdout)![0];
    const id = /key_[0-9A-Za-z]{16}/.exec(created.stdout)![0];
    expect((await listWith(key)).status).toBe(200);

    const list = await keys.run("list");
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`${id}\\s+enterprise\\s+"Acme"`));
    expect(list.stdout).not.toMatch(/so_test_|[0-9a-f]{64}/);

    const show = await keys.run("show", id);
    expect(show.status, show.stderr).toBe(0);
    expect(show.stdout).toContain("500/minute, 9000/day");
    expect(show.stdout).toMatch(/state:\s+active/);
    expect(show.stdout).not.toContain(key);

    const revoke = await keys.run("revoke", id);
    expect(revoke.status, revoke.stderr).toBe(0);
    expect((await keys.run("show", id)).stdout).toMatch(/state:\s+revoked/);

    // The worker may keep the key for its short cache lifetime (5 s); then it is refused.
    const deadline = Date.now() + 15_000;
    let status = 200;
    while (Date.now() < deadline && status === 200) {
      const response = await listWith(key);
      await response.arrayBuffer();
      status = response.status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(status).toBe(401);
  });

  it("create --scopes and --expires-in: a read-only key lists but cannot cancel; show and list print scopes and expiry", async () => {
    const created = await keys.run(
      "create",
      "--plan",
      "pro",
      "--scopes",
      "orders:read",
      "--expires-in",
      "30d",
      "--json",
    );
    expect(created.status, created.stderr).toBe(0);
    const { id, key } = JSON.parse(created.stdout) as { id: string; key: string };
    expect((await listWith(key)).status).toBe(200);
    const cancel = await service.current.call("/v1/store/orders/1", {
      method: "DELETE",
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(cancel.status).toBe(403);
    expect(cancel.headers.get("WWW-Authenticate")).toBe(
      'Bearer realm="store-orders", error="insufficient_scope", scope="orders:write"',
    );

    const show = await keys.run("show", id);
    expect(show.stdout).toMatch(/scopes:\s+orders:read\n/);
    const expires = /expires:\s+(\S+)/.exec(show.stdout)![1]!;
    expect(Math.abs(Date.parse(expires) - (Date.now() + 30 * 86_400_000))).toBeLessThan(60_000);
    expect((await keys.run("list")).stdout).toMatch(new RegExp(`${id}.*expires ${expires}`));
  });

  /** Calls until `done` holds for a response (the worker caches a key for 5 s), within 15 s. */
  async function eventually(key: string, done: (response: Response) => boolean, everyMs = 500): Promise<Response> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const response = await listWith(key);
      await response.arrayBuffer();
      if (done(response) || Date.now() > deadline) return response;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  }

  it("update, rotate and history: a new limit applies to the same key, a rotated pair shares one account, every step is audited", async () => {
    const created = await keys.run("create", "--plan", "free", "--json");
    const { id, key } = JSON.parse(created.stdout) as { id: string; key: string };
    expect((await listWith(key)).headers.get("X-RateLimit-Limit")).toBe("60");

    const updated = await keys.run(
      "update",
      id,
      "--plan",
      "pro",
      "--name",
      "upgraded",
      "--base-url",
      service.current.baseUrl,
    );
    expect(updated.status, updated.stderr).toBe(0);
    expect(updated.stderr).toContain("within 5 seconds");
    expect(updated.stdout).toMatch(/plan:\s+pro/);
    expect(
      (await eventually(key, (r) => r.headers.get("X-RateLimit-Limit") === "300")).headers.get("X-RateLimit-Limit"),
    ).toBe("300");

    const rotated = await keys.run("rotate", id, "--grace", "1h", "--json");
    expect(rotated.status, rotated.stderr).toBe(0);
    const next = JSON.parse(rotated.stdout) as { id: string; key: string; plan: string };
    expect(next).toMatchObject({ plan: "pro" });
    expect(next.key).not.toBe(key);
    const oldRemaining = Number((await listWith(key)).headers.get("X-RateLimit-Remaining"));
    const newRemaining = Number((await listWith(next.key)).headers.get("X-RateLimit-Remaining"));
    // One account: the new key's request counted after the old key's, in the same windows.
    expect(newRemaining).toBeLessThan(oldRemaining);
    expect((await keys.run("show", id)).stdout).toMatch(/expires:\s+\d{4}-/);

    // Either key of the pair updates the account: both keys answer with the new limits within a lease, and show them.
    const business = '"minute";q=1000;w=60, "day";q=100000;w=86400';
    const policyOf = async (k: string) =>
      (await eventually(k, (r) => r.headers.get("RateLimit-Policy") === business, 250)).headers.get("RateLimit-Policy");
    const budgetUpdated = await keys.run("update", id, "--plan", "business", "--base-url", service.current.baseUrl);
    expect(budgetUpdated.stderr).toContain(next.id);
    // Both keys watched at once. Within a lease's length is held with the clock injected
    // (test/workers/operator/operator-api.test.ts): a busy machine's wall clock says nothing of it.
    expect(await Promise.all([policyOf(key), policyOf(next.key)])).toEqual([business, business]);
    for (const keyId of [id, next.id])
      expect((await keys.run("show", keyId)).stdout).toMatch(
        /plan:\s+business\nname:.*\n.*\nlimits:\s+1000\/minute, 100000\/day/,
      );

    const history = await keys.run("history", id);
    // One row an operation, by the operator the command signed in as (npm start's local token: `local`).
    expect(
      history.stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split(/\s+/)[1]),
      history.stderr,
    ).toEqual(["create", "update", "rotate", "update"]);
    expect(history.stdout).toMatch(new RegExp(`update\\s+local\\s+.*"reached":\\["${id}","${next.id}"\\]`));
    const nextHistory = await keys.run("history", next.id);
    expect(nextHistory.stdout, nextHistory.stderr).toMatch(new RegExp(`create\\s+local\\s+.*"rotatedFrom":"${id}"`));
    expect(history.stdout).toContain(next.id);
    expect(history.stdout).not.toMatch(/so_test_|[0-9a-f]{64}/);
  });

  it("through the operator API: usage, revoke refused within 5 s, unban admitted again, each in the history", async () => {
    const base = ["--base-url", service.current.baseUrl];
    // The 26 requests must fall in one UTC minute (a new one admits two more and breaks the streak): if it turns
    // mid-way, made again with a fresh key.
    const flood = async () => {
      const made = JSON.parse(
        (await keys.run("create", "--plan", "free", "--per-minute", "2", "--per-day", "100", "--json")).stdout,
      ) as { id: string; key: string };
      const minute = Math.floor(Date.now() / 60_000);
      for (let i = 0; i < 25; i++) await (await listWith(made.key)).arrayBuffer();
      const banned = await listWith(made.key);
      return Math.floor(Date.now() / 60_000) === minute ? { ...made, banned } : (await banned.arrayBuffer(), undefined);
    };
    const { id, key, banned } = (await flood()) ?? (await flood())!;
    expect(((await banned.json()) as { code: string }).code).toBe("api_key_banned");

    const usage = await keys.run("usage", id, ...base, "--json");
    expect(usage.status, usage.stderr).toBe(0);
    // The day's count: on a loaded machine the minute may have turned by the time `npm run keys` answers.
    expect(JSON.parse(usage.stdout)).toMatchObject({
      keyId: id,
      usage: { day: { count: 2 }, bannedUntil: expect.any(Number) },
    });

    // The history: exactly the 2 admitted and the 24 refused (21 limited, then 3 banned), once the isolate has sent the
    // refusals it answered itself (within a second).
    const today = async () => {
      const history = await keys.run("usage", id, "--history", "--granularity", "day", ...base, "--json");
      expect(history.status, history.stderr).toBe(0);
      return (JSON.parse(history.stdout) as { buckets: { admitted: number; refused: number }[] }).buckets.at(-1);
    };
    await expect
      .poll(today, { timeout: 15_000, interval: 250 })
      .toEqual({ start: expect.any(String), admitted: 2, refused: 24, reserved: 0 });
    const table = await keys.run("usage", id, "--history", "--granularity", "day", ...base);
    expect(table.stdout).toMatch(/by day, .*: 2 admitted, 24 refused\.\nadmitted ▁+█/);

    const unban = await keys.run("unban", id, ...base);
    expect(unban.status, unban.stderr).toBe(0);
    // The minute's two are spent: room again through a raised limit rather than by waiting for the next minute.
    expect((await keys.run("update", id, "--per-minute", "100", "--per-day", "100", ...base)).status).toBe(0);
    const admitted = await eventually(key, (r) => r.status === 200);
    expect(admitted.status).toBe(200);

    const revoke = await keys.run("revoke", id, ...base);
    expect(revoke.stderr).toContain("refuses it within 5 seconds");
    // Refused within a lease's length is held with the clock injected (test/workers/operator/operator-api.test.ts).
    const refused = await eventually(key, (r) => r.status === 401);
    expect(refused.status).toBe(401);
    // Revoking it again tells the account's object again (a revoke whose object call failed is finished this way).
    const again = await keys.run("revoke", id, ...base);
    expect(again.status, again.stderr).toBe(0);

    const history = (await keys.run("history", id)).stdout;
    // The revocation, then its repetition.
    expect(
      history
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split(/\s+/)[1]),
    ).toEqual(["create", "unban", "update", "revoke", "revoke"]);
    expect(history).toMatch(/unban\s+local/);
    expect(history).toMatch(/revoke\s+local/);
  });

  it("operator add, list and revoke: a named operator's token works on the operator API once, is never stored, and is refused from the request after its revocation", async () => {
    const created = await keys.run("create", "--plan", "free", "--json");
    const { id } = JSON.parse(created.stdout);
    const usageAs = (token: string) =>
      service.current.call(`/admin/keys/${id}/usage`, { headers: { Authorization: `Bearer ${token}` } });

    const added = await keys.run("operator", "add", "ana@example.com", "--json");
    expect(added.status, added.stderr).toBe(0);
    const { name, token } = JSON.parse(added.stdout);
    expect(name).toBe("ana@example.com");
    expect(token).toMatch(/^so_op_[A-Za-z0-9_-]{43}$/);
    expect((await usageAs(token)).status).toBe(200);

    const list = await keys.run("operator", "list");
    expect(list.stdout, `status ${list.status}: ${list.stderr}`).toMatch(
      /^ana@example\.com {2}added \S+ by local {2}active$/m,
    );
    expect(list.stdout).not.toContain(token);
    const again = await keys.run("operator", "add", "ana@example.com");
    expect(again.status).toBe(1);
    expect(again.stderr).toContain("An operator named ana@example.com exists");

    const revoked = await keys.run("operator", "revoke", "ana@example.com");
    expect(revoked.status, revoked.stderr).toBe(0);
    expect(revoked.stderr).toContain("refuses their token from the next request on");
    const refused = await usageAs(token);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string }).code).toBe("invalid_api_key");
    expect((await keys.run("operator", "list")).stdout).toMatch(/^ana@example\.com .* revoked \S+ by local$/m);
    // A name is never given twice: the audit's names stay one person's.
    expect((await keys.run("operator", "add", "ana@example.com")).stderr).toContain("was revoked at");
    // Nor is a sign-in link made for a revoked operator.
    expect((await keys.run("operator-link", "ana@example.com")).stderr).toContain("revoked at");
  });

  it("enforces a key's --per-minute over real HTTP: five 200s, then 429s with the headers", async () => {
    // All seven requests must fall in one UTC minute: if the minute turns mid-way, the flood is made again with a fresh
    // key.
    const flood = async () => {
      const { key } = JSON.parse(
        (await keys.run("create", "--plan", "free", "--per-minute", "5", "--per-day", "100", "--json")).stdout,
      );
      const minute = Math.floor(Date.now() / 60_000);
      const sent: Response[] = [];
      for (let i = 0; i < 7; i++) {
        const response = await listWith(key);
        await response.arrayBuffer();
        sent.push(response);
      }
      return Math.floor(Date.now() / 60_000) === minute ? sent : undefined;
    };
    const responses = (await flood()) ?? (await flood())!;
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(responses.map((response) => response.headers.get("X-RateLimit-Remaining"))).toEqual([
      "4",
      "3",
      "2",
      "1",
      "0",
      "0",
      "0",
    ]);

    const refused = responses[5].headers;
    const minuteEnd = Math.floor(Date.now() / 60_000) * 60 + 60;
    expect(refused.get("X-RateLimit-Limit")).toBe("5");
    expect(refused.get("X-RateLimit-Resource")).toBe("minute");
    expect(Number(refused.get("X-RateLimit-Reset"))).toBe(minuteEnd);
    expect(Number(refused.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.get("Retry-After"))).toBeLessThanOrEqual(60);
    expect(refused.get("RateLimit-Policy")).toBe('"minute";q=5;w=60, "day";q=100;w=86400');
    expect(refused.get("RateLimit")).toMatch(/^"minute";r=0;t=\d+, "day";r=95;t=\d+$/);
  });

  it("create, rotate and revoke on a state no npm start serves: the Worker's own code, and npm start then serves what they did", async () => {
    const state = tempStateDir();
    try {
      const run = async (...args: string[]) => {
        const result = await runKeysCommandIn(state.path, ...args);
        expect(result.status, result.stderr).toBe(0);
        return result.stdout;
      };
      const first = JSON.parse(await run("create", "--plan", "pro", "--json")) as { id: string; key: string };
      const next = JSON.parse(await run("rotate", first.id, "--grace", "0m", "--json")) as { id: string; key: string };
      const other = JSON.parse(await run("create", "--plan", "free", "--json")) as { id: string; key: string };
      await run("revoke", other.id);
      expect(await run("show", first.id)).toMatch(/state:\s+expired/);
      expect(await run("show", other.id)).toMatch(/state:\s+revoked/);
      const shown = async () => [await run("show", next.id, "--json"), await run("show", other.id, "--json")];
      const unserved = await shown();
      // No delivery a lane had due ran: the lanes' own storage was never opened.
      expect(existsSync(join(state.path, "v3", "do", "store-orders-WebhookLane"))).toBe(false);

      const served = await startService(state.path);
      try {
        // The same commands, now served, answer from the service what they answered from the files.
        expect(await shown()).toEqual(unserved);
        const statusOf = async (key: string) => {
          const response = await served.call("/v1/store/orders", { headers: { Authorization: `Bearer ${key}` } });
          await response.arrayBuffer();
          return response.status;
        };
        expect([await statusOf(next.key), await statusOf(first.key), await statusOf(other.key)]).toEqual([
          200, 401, 401,
        ]);
      } finally {
        await served.stop();
      }
    } finally {
      state.remove();
    }
  });

  it("opens a state no npm start serves only while no other runtime holds it, and says whose it is", async () => {
    const state = tempStateDir();
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"]);
    try {
      // npm start preparing the state (its hold taken, not serving yet), or another keys command at work.
      writeFileSync(join(state.path, "runtime.json"), JSON.stringify({ pid: holder.pid, who: "npm start" }));
      const refused = await runKeysCommandIn(state.path, "list");
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain(`in use by npm start (process ${holder.pid})`);
      expect(existsSync(join(state.path, "v3"))).toBe(false);
    } finally {
      holder.kill("SIGKILL");
      state.remove();
    }
  });

  describe("bad arguments", () => {
    let before: string;
    beforeAll(async () => {
      before = (await keys.run("list", "--json")).stdout;
    });

    it.each([
      ["an unknown plan", ["create", "--plan", "gold"]],
      ["no plan", ["create"]],
      ["enterprise without limits", ["create", "--plan", "enterprise"]],
      ["only one limit", ["create", "--plan", "pro", "--per-minute", "10"]],
      ["a zero limit", ["create", "--plan", "pro", "--per-minute", "0", "--per-day", "10"]],
      ["a negative limit", ["create", "--plan", "pro", "--per-minute", "-5", "--per-day", "10"]],
      ["a fractional limit", ["create", "--plan", "pro", "--per-minute", "1.5", "--per-day", "10"]],
      ["an unknown environment", ["create", "--plan", "pro", "--env", "qa"]],
      ["an unknown option", ["create", "--plan", "pro", "--colour", "red"]],
      ["an unknown command", ["delete", "key_0123456789abcdef"]],
      ["revoking an unknown key id", ["revoke", "key_0123456789abcdef"]],
      ["showing an unknown key id", ["show", "key_0123456789abcdef"]],
      ["revoke without an id", ["revoke"]],
      ["an unknown scope", ["create", "--plan", "pro", "--scopes", "orders:read,orders:delete"]],
      ["an expiry that does not parse", ["create", "--plan", "pro", "--expires-in", "a month"]],
      ["an expiry in weeks", ["create", "--plan", "pro", "--expires-in", "4w"]],
      ["an expiry of zero", ["create", "--plan", "pro", "--expires-in", "0d"]],
      ["updating an unknown key id", ["update", "key_0123456789abcdef", "--plan", "pro"]],
      ["rotating an unknown key id", ["rotate", "key_0123456789abcdef"]],
      ["usage with no operator API to reach", ["usage", "key_0123456789abcdef", "--base-url", "http://127.0.0.1:9"]],
      ["an operator without a name", ["operator", "add"]],
      ["an operator name with a space", ["operator", "add", "ana smith"]],
      ["an unknown operator action", ["operator", "remove", "ana"]],
      ["revoking an unknown operator", ["operator", "revoke", "nobody-here"]],
      ["a sign-in link without a name", ["operator-link"]],
      ["a sign-in link for an unknown operator", ["operator-link", "nobody-here"]],
      ["a sign-in link with a word more", ["operator-link", "ana", "now"]],
    ])("exit 1 with a message for %s", async (_, args) => {
      const result = await keys.run(...args);
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(/^Error: /);
      expect(result.stdout).toBe("");
    });

    it.each([
      ["an update with nothing to change", (id: string) => ["update", id]],
      ["an update to enterprise without limits", (id: string) => ["update", id, "--plan", "enterprise"]],
      ["a grace that does not parse", (id: string) => ["rotate", id, "--grace", "a day"]],
    ])("exit 1 with a message for %s", async (_, argsFor) => {
      const { id } = (JSON.parse(before) as { id: string; revokedAt?: string }[]).find((row) => !row.revokedAt)!;
      const result = await keys.run(...argsFor(id));
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(/^Error: /);
    });

    it("exit 1 for rotating or updating a revoked key", async () => {
      const { id } = (JSON.parse(before) as { id: string; revokedAt?: string }[]).find((row) => row.revokedAt)!;
      for (const args of [
        ["rotate", id],
        ["update", id, "--name", "x"],
      ]) {
        const result = await keys.run(...args);
        expect(result.status).toBe(1);
        expect(result.stderr).toMatch(/is revoked/);
      }
    });

    it("wrote nothing", async () => {
      expect(JSON.parse(before).length).toBeGreaterThan(0);
      expect((await keys.run("list", "--json")).stdout).toBe(before);
    });
  });
});
