import { ORDER_PAGE_SIZE, type OrderRow } from "../db/orders";
import { orderJson } from "./order-json";

const encoder = new TextEncoder();

/**
 * Streams the order list as one JSON array, one page per pull: only a page of
 * rows is ever held, however large the table. Pages are keyset by id so each
 * query is an index range scan. A failure after the first byte can no longer
 * become an error status, so it aborts the stream: the client sees a
 * truncated body, never a short list that parses.
 */
export function orderListStream(
  firstPage: OrderRow[],
  nextPage: (afterId: string) => Promise<OrderRow[]>,
  onError: (error: unknown) => void,
): ReadableStream<Uint8Array> {
  let page = firstPage;
  let first = true;

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        let chunk = first ? "[" : "";
        if (page.length > 0) chunk += (first ? "" : ",") + page.map(orderJson).join(",");
        first = false;
        if (page.length < ORDER_PAGE_SIZE) {
          controller.enqueue(encoder.encode(chunk + "]"));
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(chunk));
        page = await nextPage(page[page.length - 1].id);
      } catch (error) {
        onError(error);
        controller.error(error);
      }
    },
  });
}
