import { withIdempotencyKey } from "../idempotency/idempotency-key";
import type { Operation } from "../framework/operations/define-operation";
import { describeVersionOperation } from "../framework/documents/describe-service";
import { openApiDocumentOperation } from "../framework/documents/openapi-operation";
import { referencePageOperation } from "../framework/documents/reference-page";
import { listOrderEvents } from "../events/list-order-events";
import { isolateMemory } from "./isolate-memory";
import { cancelOrder } from "../orders/cancel-order";
import { getOrderV2 } from "../orders/pages/get-order-v2";
import { listOrdersV2 } from "../orders/pages/list-orders-v2";
import { OrderIdParamsV2 } from "../orders/order-schemas";
import { API_VERSIONS } from "../framework/service-identity";
import { nudgeDispatcher } from "../webhook-delivery/dispatcher-calls";
import { createWebhookEndpoint } from "../webhooks/endpoints/create-webhook-endpoint";
import { deleteWebhookEndpoint } from "../webhooks/endpoints/delete-webhook-endpoint";
import { getWebhookEndpoint } from "../webhooks/endpoints/get-webhook-endpoint";
import { listWebhookDeliveries } from "../webhooks/endpoints/list-webhook-deliveries";
import { listWebhookEndpoints } from "../webhooks/endpoints/list-webhook-endpoints";
import { recoverWebhookDeliveries } from "../webhooks/endpoints/recover-webhook-deliveries";
import { retryWebhookDelivery } from "../webhooks/endpoints/retry-webhook-delivery";
import { sendWebhookTestEvent } from "../webhooks/endpoints/send-webhook-test-event";
import { rotateWebhookSecret } from "../webhooks/endpoints/rotate-webhook-secret";
import { updateWebhookEndpoint } from "../webhooks/endpoints/update-webhook-endpoint";
import { getUsage } from "../usage/usage-operations";
import { listOwnKeys } from "../keys/own-keys/list-own-keys";
import { rotateOwnKey } from "../keys/own-keys/rotate-own-key";
import { revokeOwnKey } from "../revocation/revoke-own-key";
import { openConsoleSessionOperation } from "../console/open-console-session";
import { redeemConsoleLinkOperation } from "../console/redeem-console-link";
import { getConsoleSession } from "../console/get-console-session";
import { endConsoleSessionOperation } from "../console/end-console-session";
import { endpointNoticeWebhook, orderEventWebhook, testEventWebhook } from "../webhooks/webhook-descriptions";

const { leases, listVersion, ownWrites } = isolateMemory;
const served = withIdempotencyKey(
  [
    listOrdersV2(ownWrites),
    getOrderV2(ownWrites),
    // v1's cancel, exactly: one guarded UPDATE, idempotent (docs/api.md#orders).
    cancelOrder(listVersion, ownWrites, {
      operationId: "cancelOrderV2",
      stability: "beta",
      params: OrderIdParamsV2,
      cancelled: nudgeDispatcher,
    }),
    listOrderEvents(ownWrites),
    createWebhookEndpoint,
    listWebhookEndpoints,
    getWebhookEndpoint,
    updateWebhookEndpoint,
    rotateWebhookSecret,
    sendWebhookTestEvent,
    deleteWebhookEndpoint,
    listWebhookDeliveries,
    retryWebhookDelivery,
    recoverWebhookDeliveries,
    getUsage(leases),
    listOwnKeys,
    rotateOwnKey,
    revokeOwnKey,
    openConsoleSessionOperation,
    redeemConsoleLinkOperation,
    getConsoleSession,
    endConsoleSessionOperation,
    // Signing in makes a session, not a write a retry could repeat: another sign-in is another session.
  ],
  [openConsoleSessionOperation],
);

const document = openApiDocumentOperation(served, API_VERSIONS.v2, isolateMemory.documents.v2, [
  orderEventWebhook,
  endpointNoticeWebhook,
  testEventWebhook,
]);

/** Every /v2 operation in documented order, then its document, reference page and `GET /v2`. No pets. */
export const operations: readonly Operation[] = [
  ...served,
  document,
  referencePageOperation(API_VERSIONS.v2),
  describeVersionOperation(API_VERSIONS.v2, [...served, document]),
];
