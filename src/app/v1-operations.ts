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

/** Every /v1 operation in documented order, then the reference page and `GET /v1`. */
export const operations: readonly Operation[] = [
  ...served,
  document,
  referencePageOperation(API_VERSIONS.v1),
  describeVersionOperation(API_VERSIONS.v1, [...served, document]),
];
