import { openApiDocumentOperation } from "./api/openapi-route";
import type { Operation } from "./api/operation";
import { cancelOrder, listOrders } from "./orders/operations";
import { getPetById } from "./pets/operation";

const served = [listOrders, cancelOrder, getPetById];

/** Every operation under the version prefix, in the order they are documented; the last is the document itself. */
export const operations: readonly Operation[] = [...served, openApiDocumentOperation(served)];
