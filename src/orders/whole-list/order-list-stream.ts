import type { OrderRow } from "../order-queries";
import { orderWriter, type DroppedValue } from "../order-json";

const encoder = new TextEncoder();

/** What the stream tells its caller once, at its end. */
interface ListOutcome {
  /** The list was cut off by a failure after its first byte. */
  aborted(error: unknown): void;
  /** Values left out of the list because they do not fit the Order schema (only called when there are some). */
  dropped(values: DroppedValue[]): void;
  /** The bytes it gave out, once it has closed, failed or been cancelled (the request's analytics point). */
  ended(bytes: number): void;
}

/**
 * Streams the order list as one JSON array, a page per pull, holding a few pages at most. A failure after the first
 * byte aborts the stream: a truncated body, never a short list that parses.
 */
export function orderListStream(
  nextPage: () => Promise<OrderRow[] | undefined>,
  outcome: ListOutcome,
): ReadableStream<Uint8Array> {
  let written = 0;
  let bytes = 0;
  const dropped: DroppedValue[] = [];
  const writeOrder = orderWriter(dropped, "v1");
  const reportDropped = () => {
    if (dropped.length > 0) outcome.dropped(dropped);
  };

  const give = (controller: ReadableStreamDefaultController<Uint8Array>, text: string) => {
    const chunk = encoder.encode(text);
    bytes += chunk.byteLength;
    controller.enqueue(chunk);
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        // A pull must enqueue something, or the stream stops asking: skip empty pages here.
        let page = await nextPage();
        while (page?.length === 0) page = await nextPage();
        if (page === undefined) {
          give(controller, written === 0 ? "[]" : "]");
          controller.close();
          reportDropped();
          outcome.ended(bytes);
          return;
        }
        give(controller, (written === 0 ? "[" : ",") + page.map(writeOrder).join(","));
        written += page.length;
      } catch (error) {
        reportDropped();
        outcome.aborted(error);
        outcome.ended(bytes);
        controller.error(error);
      }
    },
    cancel() {
      outcome.ended(bytes);
    },
  });
}
