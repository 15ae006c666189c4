import { readdirSync } from "node:fs";
import { join } from "node:path";

/** Every `.ts` file under `folder`, for the tests that hold a rule over the code's own text. */
export const tsFilesUnder = (folder: string): string[] =>
  readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? tsFilesUnder(join(folder, entry.name))
      : entry.name.endsWith(".ts")
        ? [join(folder, entry.name)]
        : [],
  );
