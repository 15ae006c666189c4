import { afterAll, beforeAll, inject } from "vitest";
import { sharedServiceOf } from "./shared-service";
import { startService, tempStateDir, type RunningService } from "../../scripts/lib/local-service";

export interface ServiceForTests {
  /** The state folder the service persists to. */
  readonly statePath: string;
  /** The running service (started before the file's first test). */
  readonly current: RunningService;
  /**
   * Stops the service (`stop`, else as the fixture stops it) and starts it again on the same state, as an operator
   * restarting it would.
   */
  restart(stop?: (running: RunningService) => Promise<void>): Promise<RunningService>;
}

/**
 * One `npm start` for a test file: started before its tests on a state
 * folder of its own, stopped and removed after them.
 */
export function useService(args: string[] = []): ServiceForTests {
  const state = tempStateDir();
  let running: RunningService | undefined;
  beforeAll(async () => {
    running = await startService(state.path, {}, args);
  });
  afterAll(async () => {
    await running?.stop();
    state.remove();
  });
  return {
    statePath: state.path,
    get current() {
      if (!running) throw new Error("the service is not running (useService() starts it in beforeAll)");
      return running;
    },
    async restart(stop = (service: RunningService) => service.stop()) {
      if (running) await stop(running);
      running = undefined;
      running = await startService(state.path, {}, args);
      return running;
    },
  };
}

/**
 * The e2e project's one shared `npm start -- --orders 100000` (shared-service.ts), for files that need no service of
 * their own.
 */
export function useSharedService() {
  return sharedServiceOf(inject("sharedService"));
}
