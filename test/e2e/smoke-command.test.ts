import { createServer, type Server } from "node:http";
import { describe, expect, it } from "vitest";
import { describeResults, runSmokeChecks } from "../../scripts/lib/smoke-checks";
import { runNpmScript } from "../support/npm-script";
import { freePort } from "../../scripts/lib/ports";
import { useSharedService } from "../support/service-fixture";

type Breakage = (method: string, path: string, response: { status: number; headers: Headers; body: string }) => void;

/** A proxy in front of the real service that breaks exactly one promise of the contract. */
async function brokenProxy(target: string, breakage: Breakage): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    const upstream = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers: req.headers.authorization ? { Authorization: req.headers.authorization } : {},
    });
    const response = { status: upstream.status, headers: new Headers(upstream.headers), body: await upstream.text() };
    response.headers.delete("Content-Length");
    response.headers.delete("Content-Encoding");
    breakage(req.method ?? "GET", req.url ?? "/", response);
    res.writeHead(response.status, Object.fromEntries(response.headers)).end(response.body);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function lines(stdout: string, verdict: "PASS" | "FAIL"): string[] {
  return stdout.split("\n").filter((line) => line.startsWith(`${verdict} `));
}

describe("npm run smoke", () => {
  const service = useSharedService();

  it("passes every check against npm start", async () => {
    const result = await runNpmScript(
      "smoke",
      "--base-url",
      `${service.current.baseUrl}/v1`,
      "--key",
      service.current.demoKey,
    );
    expect(lines(result.stdout, "FAIL")).toEqual([]);
    expect(lines(result.stdout, "PASS")).toHaveLength(8);
    expect(result.status).toBe(0);
  });

  // The checks themselves, in this process (the command above ran them as `npm run smoke` does): no Node per case.
  const smokeLines = async (baseUrl: string) =>
    describeResults(await runSmokeChecks({ baseUrl, key: service.current.demoKey })).join("\n");

  it("changes nothing in the deployment it checks", async () => {
    const before = await (await service.current.call("/v1/store/orders")).text();
    await smokeLines(`${service.current.baseUrl}/v1`);
    expect(await (await service.current.call("/v1/store/orders")).text()).toBe(before);
  });

  // `failed`: how many checks that one breakage fails (1 unless a check needs another's result).
  const breakages: { name: string; breakage: Breakage; failure: RegExp; failed?: number }[] = [
    {
      name: "drops a rate-limit header",
      breakage: (_method, _path, response) => response.headers.delete("X-RateLimit-Remaining"),
      failure: /^FAIL an authenticated response carries every rate-limit header: missing: X-RateLimit-Remaining$/,
    },
    {
      name: "answers an unknown cancel outside the Error shape",
      breakage: (method, _path, response) => {
        if (method === "DELETE") response.body = "Not Found";
      },
      failure:
        /^FAIL DELETE \/store\/orders\/\{id\} of an unknown id is 404 order_not_found: the body is not the Error shape/,
    },
    {
      name: "answers 500 for every filtered v2 page",
      breakage: (_method, path, response) => {
        if (path.startsWith("/v2/store/orders?"))
          Object.assign(response, {
            status: 500,
            body: JSON.stringify({ code: "internal_error", message: "broken", status: 500 }),
          });
      },
      failure: new RegExp(
        "^FAIL GET /v2/store/orders\\?status=pending is a page of pending orders, and its Link leads to the next: " +
          ".*expected 200, got 500$",
      ),
      // The single-order check looks up an order of that page, and fails with it.
      failed: 2,
    },
    {
      name: "lets unauthenticated calls through",
      breakage: (_method, _path, response) => {
        if (response.status === 401) Object.assign(response, { status: 200, body: "[]" });
      },
      failure: /^FAIL a call without a key is 401 missing_api_key with a Bearer challenge: expected 401, got 200$/,
    },
  ];

  it.each(breakages.map((breakage, index) => ({ ...breakage, command: index === 0 })))(
    "fails with one clear line against a server that $name",
    async ({ breakage, failure, command, failed: failing = 1 }) => {
      const proxy = await brokenProxy(service.current.baseUrl, breakage);
      try {
        // The first through `npm run smoke` itself, for its exit code; the others through the same checks in this
        // process.
        const result = command
          ? await runNpmScript("smoke", "--base-url", proxy.baseUrl, "--key", service.current.demoKey)
          : undefined;
        const output = result ? result.stdout : await smokeLines(proxy.baseUrl);
        const failed = lines(output, "FAIL");
        expect(failed).toHaveLength(failing);
        expect(failed[0]).toMatch(failure);
        expect(lines(output, "PASS")).toHaveLength(8 - failing);
        if (result) expect(result.status).toBe(1);
      } finally {
        await proxy.close();
      }
    },
  );

  it("refuses to run without a base URL and a key", async () => {
    const result = await runNpmScript("smoke", "--key", "x");
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("Usage: npm run smoke");
  });
});
