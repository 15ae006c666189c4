import { eventSequenceOperations } from "../events/event-sequence-operations";
import { getKeyUsage } from "../operator/get-key-usage";
import { getKeyUsageHistory } from "../operator/get-key-usage-history";
import { revokeKey } from "../operator/revoke-key";
import { setBudgetLimits } from "../operator/set-budget-limits";
import { unbanKey } from "../operator/unban-key";
import { createConsoleLinkOperation } from "../operator/create-console-link";
import { disableWebhookEndpoint } from "../webhooks/endpoints/disable-webhook-endpoint";
import { enableWebhookEndpoint } from "../webhooks/endpoints/enable-webhook-endpoint";
import { listAllWebhookEndpoints } from "../webhooks/endpoints/list-all-webhook-endpoints";
import { getPipelineHealth } from "../operator/get-pipeline-health";

/** Where the operator API lives: outside /v1, never in the public document (docs/operations.md#operator-api). */
export const OPERATOR_PREFIX = "/admin";

/** The operator API (docs/operations.md#operator-api): webhook endpoints, the event pipeline and the event sequence, then keys' budgets, and console sign-in links. */
export const operatorOperations = [listAllWebhookEndpoints, disableWebhookEndpoint, enableWebhookEndpoint, getPipelineHealth, ...eventSequenceOperations, getKeyUsage, getKeyUsageHistory, unbanKey, setBudgetLimits, revokeKey, createConsoleLinkOperation];
