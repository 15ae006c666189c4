import createClient from "openapi-fetch";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import type { paths } from "../../client/src/schema-v2";
import { useSharedService } from "../support/service-fixture";
import { SYNTHETIC_ORDERS } from "../support/shared-service";

/**
 * v2 through a client generated from its served document, the way most of
 * its callers will use it (docs/api.md#int64-ids-in-v2): openapi-typescript's
 * types and openapi-fetch, against the shared `npm start -- --orders 100000`,
 * whose synthetic orders have ids and pet ids from 2^53 + 1 on, where a
 * double cannot tell neighbours apart. Generators type `integer`/`int64` as a
 * number: an order id 9007199254740997 became 9007199254740996 in the URL.
 */
const service = useSharedService();

/**
 * The synthetic orders are 2^53 + i for i = 1..SYNTHETIC_ORDERS, pet 2^53 + i % 1000, status by i % 4
 * (scripts/start.ts).
 */
const synthetic = (i: number) => String(2n ** 53n + BigInt(i));

/**
 * The type openapi-typescript's module gives a property of one of the document's schemas (`components.schemas`), as
 * TypeScript source.
 */
function generatedType(module: ts.SourceFile, schema: string, property: string): string {
  const member = (members: ts.NodeArray<ts.TypeElement> | undefined, name: string) =>
    members?.find((m): m is ts.PropertySignature => ts.isPropertySignature(m) && m.name.getText(module) === name)?.type;
  const membersOf = (type: ts.TypeNode | undefined) => (type && ts.isTypeLiteralNode(type) ? type.members : undefined);
  const components = module.statements.find(
    (node): node is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(node) && node.name.text === "components",
  );
  const type = member(membersOf(member(membersOf(member(components?.members, "schemas")), schema)), property);
  if (!type) throw new Error(`no ${schema}.${property} in the generated types`);
  return type.getText(module);
}

describe("a client generated from v2's served document", () => {
  const api = () =>
    createClient<paths>({
      baseUrl: `${service.current.baseUrl}/v2`,
      headers: { Authorization: `Bearer ${service.current.demoKey}` },
    });

  it("types the ids as strings: openapi-typescript's reading of /v2/openapi.json", async () => {
    const document = await (await service.current.call("/v2/openapi.json")).json();
    // The module as openapi-typescript prints it, parsed again: its nodes then have source text to read.
    const module = ts.createSourceFile(
      "types.ts",
      astToString(await openapiTS(document as never)),
      ts.ScriptTarget.ES2022,
      true,
    );
    for (const [schema, property] of [
      ["Order", "id"],
      ["Order", "petId"],
      ["OrderEventPrevious", "id"],
      ["OrderEventPrevious", "petId"],
    ] as const) {
      expect(generatedType(module, schema, property), `${schema}.${property}`).toMatch(/^string( \| null)?$/);
    }
  });

  it("walks the orders of a pet above 2^53 exactly, and a cancel by id cancels exactly that order, its neighbours unchanged", async () => {
    const client = api();
    // Pet 2^53 + 5 has orders 2^53 + 5, 2^53 + 1005, ...: every one pending as seeded, each between a cancelled and a
    // shipped one.
    const petId = synthetic(5);
    const walked: { id: string; petId?: string }[] = [];
    for (let cursor: string | undefined, pages = 0; pages < 20; pages++) {
      const { data, error } = await client.GET("/store/orders", {
        params: { query: { petId, limit: 30, ...(cursor !== undefined && { cursor }) } },
      });
      expect(error).toBeUndefined();
      walked.push(...data!.data);
      if (data!.nextCursor === null) break;
      cursor = data!.nextCursor;
    }
    const expected = Array.from({ length: SYNTHETIC_ORDERS / 1000 }, (_, k) => synthetic(5 + 1000 * k));
    expect(walked.map((order) => order.id)).toEqual(expected);
    expect(new Set(walked.map((order) => order.petId))).toEqual(new Set([petId]));

    // One that no other test of the shared service touches (beside-another-service cancels 2^53 + 5 itself).
    const target = synthetic(50_005);
    const neighbours = [synthetic(50_004), synthetic(50_006)];
    const statusOf = async (orderId: string) => {
      const { data, error } = await client.GET("/store/orders/{orderId}", { params: { path: { orderId } } });
      expect(error).toBeUndefined();
      expect(data!.id).toBe(orderId);
      return data!.status;
    };
    expect(await statusOf(target)).toBe("pending");
    const before = await Promise.all(neighbours.map(statusOf));
    expect(before).toEqual(["cancelled", "shipped"]);

    const { response } = await client.DELETE("/store/orders/{orderId}", { params: { path: { orderId: target } } });
    expect(response.status).toBe(204);
    expect(new URL(response.url).pathname).toBe(`/v2/store/orders/${target}`);
    expect(await statusOf(target)).toBe("cancelled");
    expect(await Promise.all(neighbours.map(statusOf))).toEqual(before);
  });
});
