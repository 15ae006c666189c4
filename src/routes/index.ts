import { openApiDocumentOperation } from "./openapi";
import type { Operation } from "./operation";
import { cancelOrderOperation, listOrders } from "./orders";
import { getPetById } from "./pets";

/** Every operation under /v1, in the order they are documented. */
export const operations: readonly Operation[] = [
  listOrders,
  cancelOrderOperation,
  getPetById,
  openApiDocumentOperation(() => operations),
];
