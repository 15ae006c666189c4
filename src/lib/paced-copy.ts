/** Where the copy goes, opened on the first read so a body nobody reads (HEAD) starts nothing. */
export interface PacedCopy {
  open(): WritableStream<Uint8Array>;
  /** Asked once the source has ended: false throws the copy away (aborts it) instead of completing it. */
  keep(): Promise<boolean>;
}

/**
 * The source for the client, copied as it passes, both paced together: `tee()` would buffer the whole body for the
 * slower side. A failing copy is dropped; a failing source or a client gone aborts the copy, never completing it with
 * part.
 */
export function pacedCopy(source: ReadableStream<Uint8Array>, copy: PacedCopy): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  let opened = false;
  const drop = (reason: unknown) => {
    writer?.abort(reason).catch(() => {});
    writer = undefined;
  };

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!opened) {
          opened = true;
          writer = copy.open().getWriter();
        }
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (error) {
          drop(error);
          controller.error(error);
          return;
        }
        if (chunk.done) {
          controller.close();
          // The client has its whole body; the copy is completed (or not) after.
          const finishing = writer;
          writer = undefined;
          if (finishing) {
            await copy
              .keep()
              .then((keep) => (keep ? finishing.close() : finishing.abort("not kept")))
              .catch((error: unknown) => finishing.abort(error).catch(() => {}));
          }
          return;
        }
        if (writer) {
          try {
            await writer.ready;
            // Its own bytes: the client's side may hand its chunk on (and detach it) before the copy reads it.
            writer.write(chunk.value.slice()).catch(() => {});
          } catch (error) {
            drop(error);
          }
        }
        controller.enqueue(chunk.value);
      },
      cancel(reason) {
        drop(reason);
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
