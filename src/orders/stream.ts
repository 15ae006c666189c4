import { ORDER_PAGE_SIZE, type OrderRow } from "./queries";
import { orderWriter, type DroppedValue } from "./json";

const encoder = new TextEncoder();

/** What the stream tells its caller once, at its end. */
interface ListOutcome {
  /** The list was cut off by a failure after its first byte. */
  aborted(error: unknown): void;
  /** Values left out of the list because they do not fit the Order schema (only called when there are some). */
  dropped(values: DroppedValue[]): void;
}

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
  outcome: ListOutcome,
): ReadableStream<Uint8Array> {
  let page = firstPage;
  let first = true;
  const dropped: DroppedValue[] = [];
  const writeOrder = orderWriter(dropped);
  const reportDropped = () => {
    if (dropped.length > 0) outcome.dropped(dropped);
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        let chunk = first ? "[" : "";
        if (page.length > 0) chunk += (first ? "" : ",") + page.map(writeOrder).join(",");
        first = false;
        if (page.length < ORDER_PAGE_SIZE) {
          controller.enqueue(encoder.encode(chunk + "]"));
          controller.close();
          reportDropped();
          return;
        }
        controller.enqueue(encoder.encode(chunk));
        page = await nextPage(page[page.length - 1].id);
      } catch (error) {
        reportDropped();
        outcome.aborted(error);
        controller.error(error);
      }
    },
  });
}
