import { z } from "zod";
import { int64Field, int64Param } from "../lib/ids";

export const Pet = z
  .object({
    id: int64Field("The pet's identifier"),
    name: z.string(),
    status: z.string().optional(),
  })
  .meta({ id: "Pet", description: "A pet. Fields without a value are omitted." });

export const PetIdParams = z.object({
  petId: int64Param("The identifier of the pet"),
});
