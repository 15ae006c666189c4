/**
 * The local secrets, in `operator.env` beside the local state (git ignores
 * it), which the local runtime reads as secrets: the operator API's token,
 * the key webhook secrets are sealed with and the key console sessions are
 * sealed with, each made once, then kept (a new sealing key would leave every
 * endpoint's secret unreadable, and sign everyone out of the console). Not
 * `.dev.vars`, whose secrets `wrangler types --check` would add to the
 * checked types. Deployed environments set theirs with `wrangler secret put`.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Where `npm start` keeps them: beside the local state it runs on. */
export const operatorEnvFile = (stateDir: string | undefined) => join(stateDir ?? ".wrangler/state", "operator.env");

export interface LocalSecrets {
  OPERATOR_TOKEN: string;
  WEBHOOK_SECRETS_KEY: string;
  CONSOLE_SESSION_KEY: string;
}

/** The secrets of the file, made where missing and written back; the operator token is `local:<token>`. */
export function ensureLocalSecrets(file: string): LocalSecrets {
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const random = () => Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64url");
  const token = /^OPERATOR_TOKEN="?local:([^"\n]+)"?$/m.exec(text)?.[1] ?? random();
  const secrets = {
    OPERATOR_TOKEN: `local:${token}`,
    WEBHOOK_SECRETS_KEY: /^WEBHOOK_SECRETS_KEY="?([^"\n]+)"?$/m.exec(text)?.[1] ?? random() + random(),
    CONSOLE_SESSION_KEY: /^CONSOLE_SESSION_KEY="?([^"\n]+)"?$/m.exec(text)?.[1] ?? random() + random(),
  };
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    Object.entries(secrets)
      .map(([name, value]) => `${name}="${value}"\n`)
      .join(""),
    { mode: 0o600 },
  );
  return secrets;
}
