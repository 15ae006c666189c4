import type { Operation } from "./api/define-operation";
import { isolateMemory } from "./isolate-memory";
import { openApiDocumentOperation } from "./api/openapi-operation";
import { referencePageOperation } from "./api/reference-page";
import { cancelOrder } from "./orders/cancel-order";
import { listOrders } from "./orders/list-orders";
import { getPetById } from "./pets/get-pet";
import { nudgeDispatcher } from "./webhooks/nudge-dispatcher";
import { API_VERSIONS } from "./service-identity";

const { listVersion, ownWrites } = isolateMemory;
const served = [listOrders(listVersion, ownWrites), cancelOrder(listVersion, ownWrites, { operationId: "cancelOrder", stability: "stable", cancelled: nudgeDispatcher }), getPetById];

/**
 * Every operation under /v1, in the order they are documented; the document
 * itself is the last documented one, then the reference page, which is for
 * people and not in the document.
 */
export const operations: readonly Operation[] = [
  ...served,
  openApiDocumentOperation(served, API_VERSIONS.v1, isolateMemory.documents.v1),
  referencePageOperation(API_VERSIONS.v1),
];
