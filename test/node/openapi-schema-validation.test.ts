import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { servedDocument } from "../support/served-document";

describe("the OpenAPI document", () => {
  it.each(["v1", "v2"] as const)("of %s validates as OpenAPI 3.1", async (version) => {
    const validator = new Validator();
    const result = await validator.validate(servedDocument(undefined, version) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("is checked by a validator that does reject a broken document", async () => {
    const broken = structuredClone(servedDocument()) as {
      paths: Record<string, Record<string, { parameters: object[] }>>;
    };
    broken.paths["/pets/{petId}"].get.parameters[0] = { name: "petId", in: "body" };
    expect((await new Validator().validate(broken as never)).valid).toBe(false);
  });
});
