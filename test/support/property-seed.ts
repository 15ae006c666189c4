import fc from "fast-check";

/**
 * Every fast-check property of a test file runs from one seed: FC_SEED when
 * set, to replay a failure, else a new one. fast-check names the seed (and
 * the shrunk path) in a failed property's report; `FC_SEED=<seed> npx vitest
 * run <file>` runs it again exactly.
 */
export function seedProperties(fromEnvironment: string | undefined): number {
  const seed = fromEnvironment ? Number(fromEnvironment) : Math.floor(Math.random() * 2 ** 31);
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });
  return seed;
}
