import { jsonBody } from "../framework/counted-body";
import { AdminKey, adminKeyOf } from "./admin-key";
import { keyOperation } from "./key-operation";

/** GET /admin/keys/{keyId}: one key as it is stored (`npm run keys -- show`). */
export const getKey = keyOperation(
  {
    operationId: "getKey",
    method: "get",
    action: "",
    summary: "A key: its plan, limits, scopes, expiry and state",
    description: "The key's record, never the key or its hash, with the limits in force and its state.",
    body: AdminKey,
  },
  async (c, { record }) => jsonBody(c, adminKeyOf(record)),
);
