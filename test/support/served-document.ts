import { readEnvironment, type DeployedEnvironment } from "../../scripts/lib/environments";
import { readConfig } from "../../src/framework/read-config";
import { openApiDocument } from "../../src/framework/documents/openapi-document";
import { API_VERSIONS } from "../../src/framework/service-identity";
import { operations as v1 } from "../../src/app/v1-operations";
import { operations as v2 } from "../../src/app/v2-operations";

export type VersionName = keyof typeof API_VERSIONS;

/**
 * The OpenAPI document an environment of wrangler.jsonc serves at /<version>/openapi.json (local when none is named).
 */
export function servedDocument(env?: DeployedEnvironment, version: VersionName = "v1"): Record<string, unknown> {
  const result = readConfig(readEnvironment(env).vars);
  if (!result.ok) throw new Error(`wrangler.jsonc's vars are invalid: ${result.problems.join("; ")}`);
  return openApiDocument(version === "v1" ? v1 : v2, result.config, API_VERSIONS[version]);
}
