import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../src/openapi";
import { operations } from "../src/routes";

const vars = {
  PRODUCTION_BASE_URL: "https://store-orders.example.com/v1",
  STAGING_BASE_URL: "https://store-orders-staging.example.com/v1",
  BASE_URL: "http://localhost:8787/v1",
} as Env;

describe("the OpenAPI document", () => {
  it("validates as OpenAPI 3.1", async () => {
    const validator = new Validator();
    const result = await validator.validate(openApiDocument(operations, vars) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("is checked by a validator that does reject a broken document", async () => {
    const broken = structuredClone(openApiDocument(operations, vars)) as { paths: Record<string, Record<string, { parameters: object[] }>> };
    broken.paths["/pets/{petId}"].get.parameters[0] = { name: "petId", in: "body" };
    expect((await new Validator().validate(broken as never)).valid).toBe(false);
  });
});
