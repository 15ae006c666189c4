import { z } from "zod";
import { defineOperation } from "../framework/operations/define-operation";
import { ApiError } from "../framework/api-error";
import { jsonBody } from "../framework/counted-body";
import { readJsonBody } from "../framework/operations/read-json-body";
import { callDependency } from "../lib/call-dependency";
import { addressGroup } from "../lib/client-address";
import { auditedKeyOperation } from "../keys/audit";

const GROUP_RULE = "an IPv4 address, or an IPv6 /64 as the rate-limit headers name it (2001:db8::/64)";
const UnbanBody = z.strictObject({ group: z.string().max(64).describe(GROUP_RULE) });

/** The one spelling the limiter names a group by: what comes back unchanged from it counts. */
function groupOf(text: string): string | undefined {
  const group = addressGroup(text.replace(/\/64$/, ""));
  return group === text ? group : undefined;
}

/** POST /admin/address-groups/unban: ends an address group's ban now; audited as `ip:<group>`. */
export const unbanAddressGroup = defineOperation({
  operator: true,
  tag: "Service",
  stability: "experimental",
  documented: false,
  operationId: "unbanAddressGroup",
  method: "post",
  path: "/address-groups/unban",
  summary: "End an address group's ban now",
  description:
    "Ends the ban of the callers without a key behind one address group and starts its streak over; audited with the " +
    "operator's name.",
  requestBody: { description: "The group", schema: UnbanBody },
  responses: {
    200: { description: "The group's usage", body: z.object({ group: z.string(), usage: z.object({}).loose() }) },
  },
  errors: ["invalid_body", "unsupported_media_type", "body_too_large"],
  async handle(c) {
    const { group: text } = await readJsonBody(c, UnbanBody);
    const group = groupOf(text.trim().toLowerCase());
    if (group === undefined)
      throw new ApiError("invalid_body", `group must be ${GROUP_RULE}; got ${JSON.stringify(text.slice(0, 64))}.`);
    const budget = `ip:${group}`;
    const usage = await auditedKeyOperation(
      c.env.DB,
      { operation: "unban", keyId: budget, changes: { group }, actor: c.get("operatorActor") ?? "operator" },
      () => callDependency("rate limiter", () => c.env.ACCOUNTS.getByName(budget).unban()),
    );
    return jsonBody(c, { group, usage });
  },
});
