import { eventSequenceOperations } from "../events/event-sequence-operations";
import { getKeyUsage } from "../operator/get-key-usage";
import { getKeyUsageHistory } from "../operator/get-key-usage-history";
import { revokeAnyKey } from "../revocation/revoke-any-key";
import { setBudgetLimits } from "../operator/set-budget-limits";
import { unbanKey } from "../operator/unban-key";
import { unbanAddressGroup } from "../operator/unban-address-group";
import { unbanPartner } from "../operator/unban-partner";
import { createKey } from "../operator/create-key";
import { getKey } from "../operator/get-key";
import { updateKey } from "../operator/update-key";
import { rotateAnyKey } from "../operator/rotate-any-key";
import { getKeyHistory } from "../operator/get-key-history";
import { listOperators } from "../operator/named-operators/list-operators";
import { addOperator } from "../operator/named-operators/add-operator";
import { revokeOperator } from "../operator/named-operators/revoke-operator";
import { createOperatorLink } from "../operator/named-operators/create-operator-link";
import { createConsoleLinkOperation } from "../operator/create-console-link";
import { disableWebhookEndpoint } from "../webhooks/endpoints/disable-webhook-endpoint";
import { enableWebhookEndpoint } from "../webhooks/endpoints/enable-webhook-endpoint";
import { liftHostLockOperation, lockHostOperation } from "../webhooks/endpoints/host-lock-operations";
import { listAllWebhookEndpoints } from "../webhooks/endpoints/list-all-webhook-endpoints";
import { listEndpointDeliveries } from "../webhooks/endpoints/list-endpoint-deliveries";
import { getPipelineHealth } from "../operator/get-pipeline-health";
import { openOperatorSessionOperation } from "../operator/session/open-operator-session";
import { redeemOperatorLinkOperation } from "../operator/session/redeem-operator-link";
import { getOperatorSession } from "../operator/session/get-operator-session";
import { endOperatorSessionOperation } from "../operator/session/end-operator-session";
import { searchKeys } from "../operator/search-keys";
import { getBudget } from "../operator/get-budget";
import { getTraffic } from "../operator/traffic/get-traffic";

/** Where the operator API lives: outside /v1, never in the public document (docs/operations.md#operator-api). */
export const OPERATOR_PREFIX = "/admin";

/** The operator API (docs/operations.md#operator-api), in documented order. */
export const operatorOperations = [
  openOperatorSessionOperation,
  redeemOperatorLinkOperation,
  getOperatorSession,
  endOperatorSessionOperation,
  listAllWebhookEndpoints,
  listEndpointDeliveries,
  disableWebhookEndpoint,
  enableWebhookEndpoint,
  lockHostOperation,
  liftHostLockOperation,
  getPipelineHealth,
  ...eventSequenceOperations,
  getTraffic,
  searchKeys,
  createKey,
  getKey,
  updateKey,
  getKeyHistory,
  getBudget,
  getKeyUsage,
  getKeyUsageHistory,
  unbanKey,
  unbanAddressGroup,
  unbanPartner,
  setBudgetLimits,
  rotateAnyKey,
  revokeAnyKey,
  createConsoleLinkOperation,
  listOperators,
  addOperator,
  revokeOperator,
  createOperatorLink,
];
