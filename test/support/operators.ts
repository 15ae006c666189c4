import { env } from "cloudflare:workers";
import { sha256Hex } from "../../src/lib/digest";
import { INSERT_OPERATOR } from "../../src/operator/operator-table";

/** An operator added as `npm run keys -- operator add` adds one, only the token's SHA-256 stored: its token. */
export async function addOperator(name: string): Promise<string> {
  const token = `so_op_${crypto.randomUUID()}`;
  await env.DB.prepare(INSERT_OPERATOR)
    .bind(name, await sha256Hex(token), new Date().toISOString(), "cli:tests")
    .run();
  return token;
}
