import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The test files that take longest, in that order (2026-11-27), started
 * before the rest: of a project's two workers, one left with a long file at
 * the end runs it alone. Vitest orders files by the durations it cached
 * from the run before; a clean clone (`npm ci`, `.ci/run`) has none, and
 * vitest then runs larger files first, which put the lease simulations
 * (short files, the node project's longest) last: its project took 71 s
 * instead of 62. A file missing here only runs in vitest's order.
 */
const LONGEST = [
  "test/workers/orders/order-list-fidelity.test.ts",
  "test/workers/app/authorization-matrix-operator.test.ts",
  "test/workers/app/authorization-matrix-webhooks.test.ts",
  "test/workers/app/authorization-matrix-orders.test.ts",
  "test/workers/app/fuzz.test.ts",
  "test/workers/app/authorization-matrix-keys.test.ts",
  "test/node/lease-simulation-faults.test.ts",
  "test/node/limits-across-isolates.test.ts",
  "test/node/openapi-lint.test.ts",
  "test/node/gradual-deploy.test.ts",
  "test/node/environments.test.ts",
  "test/node/lease-simulation.test.ts",
  "test/node/ship-instant.test.ts",
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = LONGEST.indexOf(relative(this.ctx.config.root, file.moduleId));
      return index === -1 ? LONGEST.length : index;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
