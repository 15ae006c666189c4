import { z } from "zod";
import { Int64, Int64Param } from "./ids";

export const Pet = z
  .object({
    id: Int64,
    name: z.string(),
    status: z.string().optional(),
  })
  .meta({ id: "Pet", description: "A pet. Fields without a value are omitted." });

export const PetIdParams = z.object({
  petId: Int64Param.describe("The identifier of the pet"),
});
