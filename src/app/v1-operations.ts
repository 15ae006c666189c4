import type { Operation } from "../framework/operations/define-operation";
import { isolateMemory } from "./isolate-memory";
import { describeVersionOperation } from "../framework/documents/describe-service";
import { openApiDocumentOperation } from "../framework/documents/openapi-operation";
import { referencePageOperation } from "../framework/documents/reference-page";
import { cancelOrder } from "../orders/cancel-order";
import { listOrders } from "../orders/whole-list/list-orders-v1";
import { OrderIdParams } from "../orders/order-schemas";
import { getPetById } from "../pets/get-pet";
import { nudgeDispatcher } from "../webhook-delivery/dispatcher-calls";
import { API_VERSIONS } from "../framework/service-identity";

const { listVersion, ownWrites, listFills } = isolateMemory;
const served = [
  listOrders(listVersion, ownWrites, listFills),
  cancelOrder(listVersion, ownWrites, {
    operationId: "cancelOrder",
    stability: "stable",
    params: OrderIdParams,
    cancelled: nudgeDispatcher,
  }),
  getPetById,
];

const document = openApiDocumentOperation(served, API_VERSIONS.v1, isolateMemory.documents.v1);

/**
 * Every operation under /v1, in the order they are documented; the document
 * itself is the last documented one, then the reference page, which is for
 * people and not in the document, and `GET /v1`, which describes them.
 */
export const operations: readonly Operation[] = [
  ...served,
  document,
  referencePageOperation(API_VERSIONS.v1),
  describeVersionOperation(API_VERSIONS.v1, [...served, document]),
];
