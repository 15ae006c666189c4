import { findPet } from "./queries";
import { ApiError } from "../errors";
import { Pet, PetIdParams } from "./schemas";
import { defineOperation } from "../api/operation";

export const getPetById = defineOperation({
  operationId: "getPetById",
  method: "get",
  path: "/pets/{petId}",
  summary: "Find a pet by id (deprecated)",
  tag: "Pets",
  description:
    "Deprecated: answers with Deprecation, Sunset and Link headers until its sunset date, and 410 endpoint_sunset " +
    "from then on. Pet catalog operations are not part of this API.",
  stability: "stable",
  deprecation: (config) => ({ ...config.pets, link: `${config.baseUrl}/openapi.json` }),
  params: {
    schema: PetIdParams,
    invalid: { code: "invalid_pet_id", message: "petId must be a decimal 64-bit integer such as 42." },
  },
  responses: { 200: { description: "The pet", body: Pet, headers: ["Deprecation", "Sunset", "Link"] } },
  errors: ["invalid_pet_id", "pet_not_found", "endpoint_sunset"],
  async handle(c, { petId }) {
    const pet = await findPet(c.env.DB, petId);
    if (!pet) throw new ApiError("pet_not_found", `Pet ${petId} does not exist.`);
    // Written by hand, like orders, so the int64 id keeps every digit.
    const status = pet.status === null ? "" : `,"status":${JSON.stringify(pet.status)}`;
    return c.body(`{"id":${pet.id},"name":${JSON.stringify(pet.name)}${status}}`, 200, {
      "Content-Type": "application/json",
    });
  },
});
