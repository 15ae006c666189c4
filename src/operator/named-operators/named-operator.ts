import { z } from "zod";
import type { Context } from "hono";
import type { AppEnv } from "../../framework/app-env";
import { ApiError } from "../../framework/api-error";
import { callDependency } from "../../lib/call-dependency";
import { OPERATOR_BY_NAME, OPERATOR_NAME, type OperatorRow } from "../operator-table";

/** What every operation on the operators' table shares: an operator's token, no place in the public documents. */
export const NAMED_OPERATORS = {
  operator: true,
  tag: "Service",
  stability: "experimental",
  documented: false,
} as const;

/** An answer that carries a secret shown once: no cache keeps it. */
export const NO_STORE = { "Cache-Control": "no-store" } as const;

/** A name in a path: as the table takes it. */
export const OperatorParams = z.object({ name: z.string().regex(OPERATOR_NAME) });
export const operatorNameInvalid = {
  code: "not_found",
  message: "No such operator: names are letters, digits and . _ @ + -, up to 64.",
} as const;

export const NamedOperator = z
  .object({
    name: z.string(),
    createdAt: z.string(),
    createdBy: z.string(),
    revokedAt: z.string().nullable(),
    revokedBy: z.string().nullable(),
  })
  .meta({ id: "NamedOperator" });

export const namedOperatorOf = (row: OperatorRow): z.infer<typeof NamedOperator> => ({
  name: row.name,
  createdAt: row.created_at,
  createdBy: row.created_by,
  revokedAt: row.revoked_at,
  revokedBy: row.revoked_by,
});

/** The operator of that name, revoked or not; 404 when none ever was. */
export async function operatorNamed(c: Context<AppEnv>, name: string): Promise<OperatorRow> {
  const row = await callDependency("D1", () => c.env.DB.prepare(OPERATOR_BY_NAME).bind(name).first<OperatorRow>());
  if (!row) throw new ApiError("not_found", `No operator ${name}.`);
  return row;
}
