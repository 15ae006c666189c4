import { readEnvironment, type DeployedEnvironment } from "../../scripts/lib/environments";
import { readConfig } from "../../src/read-config";
import { openApiDocument } from "../../src/api/openapi-document";
import { operations } from "../../src/v1-operations";

/** The OpenAPI document an environment of wrangler.toml serves at /v1/openapi.json (local when none is named). */
export function servedDocument(env?: DeployedEnvironment): Record<string, unknown> {
  const result = readConfig(readEnvironment(env).vars);
  if (!result.ok) throw new Error(`wrangler.toml's vars are invalid: ${result.problems.join("; ")}`);
  return openApiDocument(operations, result.config);
}
