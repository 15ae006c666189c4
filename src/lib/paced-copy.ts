/** Where the copy goes, opened on the first read so a body nobody reads (HEAD) starts nothing. */
export interface PacedCopy {
  open(): WritableStream<Uint8Array>;
  /** Asked once the source has ended: false throws the copy away (aborts it) instead of completing it. */
  keep(): Promise<boolean>;
}

/**
 * The source for the client, and the same bytes written to a copy as they
 * pass, the two paced together: a chunk is read from the source only when the
 * client asks for one and the copy has room for it. A plain `tee()` would
 * instead buffer everything the slower side has not read yet, which for a
 * large list is the whole body. The copy is best effort: if it fails, the
 * client is served on without it; if the source fails or the client goes
 * away, the copy is aborted, never completed with part of the body.
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
