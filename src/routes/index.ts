import type { Operation } from "./operation";
import { cancelOrderOperation, listOrders } from "./orders";

/** Every public operation under /v1, in the order they are documented. */
export const operations: readonly Operation[] = [listOrders, cancelOrderOperation];
