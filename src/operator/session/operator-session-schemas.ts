import { z } from "zod";

/** What the operators' session operations share: undocumented, like the whole operator API. */
export const OPERATOR_SESSION = { tag: "Service", stability: "experimental", documented: false } as const;

export const OperatorSignedIn = z.object({
  operator: z.string().describe("Who is signed in: the name every audit row of their actions carries"),
  via: z
    .enum(["session", "token", "access"])
    .describe(
      "How this request is signed in: an operators' console session, an operator's token, or Cloudflare Access",
    ),
  expiresAt: z
    .string()
    .nullable()
    .describe("When the session ends at the latest; null for a token or Access, which open none"),
});

export const RedeemOperatorLink = z.object({ token: z.string().describe("The token from the link's fragment") });
