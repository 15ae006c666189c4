import { defineOperation } from "../framework/operations/define-operation";
import { logLine } from "../lib/log";
import { ApiError } from "../framework/api-error";
import { jsonWriter } from "../lib/json-writer";
import { findPet } from "./pet-queries";
import { Pet, PetIdParams } from "./pet-schemas";
import { textBody } from "../framework/counted-body";

const writePet = jsonWriter(Pet);

export const getPetById = defineOperation({
  operationId: "getPetById",
  scope: "orders:read",
  method: "get",
  path: "/pets/{petId}",
  summary: "Find a pet by id (deprecated)",
  tag: "Pets",
  description:
    "Deprecated: answers with Deprecation, Sunset and Link headers until its sunset date, and 410 endpoint_sunset " +
    "from then on. Pet catalog operations are not part of this API.",
  stability: "stable",
  deprecation: (config) => config.pets,
  params: {
    schema: PetIdParams,
    invalid: { code: "invalid_pet_id", message: "petId must be a decimal 64-bit integer such as 42." },
  },
  responses: { 200: { description: "The pet", body: Pet, headers: ["Deprecation", "Sunset", "Link"] } },
  errors: ["invalid_pet_id", "pet_not_found", "endpoint_sunset"],
  async handle(c, { petId }) {
    const pet = await findPet(c.env.DB, petId);
    if (!pet) throw new ApiError("pet_not_found", `Pet ${petId} does not exist.`);
    // As the Pet schema says, like orders: the int64 id digit for digit, nothing of another type.
    const json = writePet(pet, (field) =>
      logLine("warn", c.get("requestId"), "pet: a value that does not fit the Pet schema was left out", {
        petId,
        field,
      }),
    );
    return textBody(c, json, 200, { "Content-Type": "application/json" });
  },
});
