import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { operatorApi } from "../../scripts/lib/operator-client";

/**
 * How the scripts call the operator API (docs/operations.md#api-keys): its answer, a refusal as the service's own
 * message, and a service out of reach as undefined, each as what it was, never one for another.
 */
let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

async function serviceAnswering(status: number, body: unknown): Promise<string> {
  server = createServer((_, response) =>
    response.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body)),
  );
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("calling the operator API", () => {
  const withToken = (baseUrl: string) => {
    process.env.OPERATOR_TOKEN = "ops:token";
    try {
      return operatorApi(baseUrl, undefined)!;
    } finally {
      delete process.env.OPERATOR_TOKEN;
    }
  };

  it("gives the service's answer", async () => {
    const api = withToken(await serviceAnswering(200, { keyId: "key_0123456789abcdef" }));
    expect(await api.call("POST", "/keys/key_0123456789abcdef/revoke")).toEqual({ keyId: "key_0123456789abcdef" });
  });

  it("throws a 401 or a 500 as the answer it was, not as unreachable", async () => {
    const refusing = withToken(
      await serviceAnswering(401, {
        code: "invalid_api_key",
        message: "The operator token is not valid.",
        status: 401,
      }),
    );
    await expect(refusing.call("GET", "/operators")).rejects.toThrow(
      "the operator API answered 401: The operator token is not valid.",
    );
    server!.close();
    const failing = withToken(
      await serviceAnswering(500, { code: "internal_error", message: "Something went wrong.", status: 500 }),
    );
    await expect(failing.call("GET", "/operators")).rejects.toThrow("answered 500");
  });

  it("answers undefined when it cannot reach the service, and has no API without a credential or a service", async () => {
    expect(await withToken("http://127.0.0.1:9").call("GET", "/operators")).toBeUndefined();
    expect(operatorApi("http://127.0.0.1:9", undefined)).toBeUndefined();
    // A local state nothing serves: no serving record beside it.
    process.env.OPERATOR_TOKEN = "ops:token";
    try {
      expect(operatorApi(undefined, { stateDir: "/nonexistent/state" })).toBeUndefined();
    } finally {
      delete process.env.OPERATOR_TOKEN;
    }
  });
});

describe("where the operator API's credential goes", () => {
  it("never in the clear to another host, and never on through a redirect", async () => {
    process.env.OPERATOR_TOKEN = "ops:token";
    try {
      expect(() => operatorApi("http://store-orders.example.com/v1", undefined)).toThrow(/not https/);
      const seen: (string | undefined)[] = [];
      const elsewhere = createServer((request, response) => {
        seen.push(request.headers.authorization);
        response.end("{}");
      });
      await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
      const target = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/admin/operators`;
      server = createServer((_, response) => response.writeHead(302, { Location: target }).end());
      await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
      const api = operatorApi(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, undefined)!;
      await expect(api.call("GET", "/operators")).rejects.toThrow("answered 302");
      elsewhere.close();
      expect(seen).toEqual([]);
    } finally {
      delete process.env.OPERATOR_TOKEN;
    }
  });

  it("locally, is the state's own token, whatever a deployed environment's the shell holds", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "operator-client-"));
    const seen: Record<string, string | undefined>[] = [];
    server = createServer((request, response) => {
      seen.push({ authorization: request.headers.authorization, id: request.headers["cf-access-client-id"] as string });
      response.writeHead(200, { "Content-Type": "application/json" }).end("{}");
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    writeFileSync(join(stateDir, "operator.env"), 'OPERATOR_TOKEN="local:the-state-token"\n');
    Object.assign(process.env, {
      OPERATOR_TOKEN: "production:not-for-here",
      CF_ACCESS_CLIENT_ID: "a",
      CF_ACCESS_CLIENT_SECRET: "b",
    });
    try {
      await operatorApi(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { stateDir })!.call(
        "GET",
        "/operators",
      );
    } finally {
      for (const name of ["OPERATOR_TOKEN", "CF_ACCESS_CLIENT_ID", "CF_ACCESS_CLIENT_SECRET"]) delete process.env[name];
      rmSync(stateDir, { recursive: true, force: true });
    }
    expect(seen).toEqual([{ authorization: "Bearer the-state-token", id: undefined }]);
  });
});

describe("signing in to the operator API", () => {
  it("sends an Access service token where one is set (Access turns it into its assertion), else the operator token", async () => {
    const seen: Record<string, string | undefined>[] = [];
    server = createServer((request, response) => {
      seen.push({
        authorization: request.headers.authorization,
        id: request.headers["cf-access-client-id"] as string | undefined,
        secret: request.headers["cf-access-client-secret"] as string | undefined,
      });
      response.writeHead(200, { "Content-Type": "application/json" }).end("{}");
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const env = {
      OPERATOR_TOKEN: "ops:token",
      CF_ACCESS_CLIENT_ID: "8b1c0a4e.access",
      CF_ACCESS_CLIENT_SECRET: "service-secret",
    };
    Object.assign(process.env, env);
    try {
      await operatorApi(baseUrl, undefined)!.call("GET", "/pipeline");
      delete process.env.CF_ACCESS_CLIENT_ID;
      delete process.env.CF_ACCESS_CLIENT_SECRET;
      await operatorApi(baseUrl, undefined)!.call("GET", "/pipeline");
    } finally {
      for (const name of Object.keys(env)) delete process.env[name];
    }
    expect(seen).toEqual([
      { authorization: undefined, id: "8b1c0a4e.access", secret: "service-secret" },
      { authorization: "Bearer token", id: undefined, secret: undefined },
    ]);
  });
});
