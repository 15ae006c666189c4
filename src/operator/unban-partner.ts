import { z } from "zod";
import { defineOperation } from "../framework/operations/define-operation";
import { jsonBody } from "../framework/counted-body";
import { callDependency } from "../lib/call-dependency";
import { auditedKeyOperation } from "../keys/audit";
import { PARTNER_BUDGETS, type PartnerBudget } from "../account/plans";

const PARTNERS = Object.keys(PARTNER_BUDGETS) as [PartnerBudget, ...PartnerBudget[]];

/** POST /admin/partners/{partner}/unban: a partner's spent minute and day start over. Audited. */
export const unbanPartner = defineOperation({
  operator: true,
  tag: "Service",
  stability: "experimental",
  documented: false,
  operationId: "unbanPartner",
  method: "post",
  path: "/partners/{partner}/unban",
  summary: "Lift a partner's refusal now",
  description:
    "Starts a partner's minute and day over and ends any ban, so its next report is admitted; audited with the " +
    "operator's name.",
  params: {
    schema: z.object({ partner: z.enum(PARTNERS) }),
    invalid: { code: "not_found", message: `No such partner: the partners are ${PARTNERS.join(", ")}.` },
  },
  responses: {
    200: { description: "The partner's usage", body: z.object({ partner: z.string(), usage: z.object({}).loose() }) },
  },
  errors: ["not_found"],
  async handle(c, { partner }) {
    const budget = `partner:${partner}`;
    const usage = await auditedKeyOperation(
      c.env.DB,
      { operation: "unban", keyId: budget, changes: { partner }, actor: c.get("operatorActor") ?? "operator" },
      () => callDependency("rate limiter", () => c.env.ACCOUNTS.getByName(budget).forgive()),
    );
    return jsonBody(c, { partner, usage });
  },
});
