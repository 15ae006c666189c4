/**
 * One `npm start -- --orders 100000` for the e2e files that can share it (the
 * keys command, the client, the reference page, the smoke check): each start
 * costs seconds of a 2-core machine. The e2e project's globalSetup starts it
 * before the first file and stops it after the last; the files run one at a
 * time, so none sees another's requests while it runs. `npm start` itself and
 * a restart are tested on services of their own.
 */
import type { TestProject } from "vitest/node";
import { fetchLocal, startService, tempStateDir } from "../../scripts/lib/local-service";

/** Synthetic orders the shared service adds to the demo data's 37 (ids consecutive from 2^53 + 1). */
export const SYNTHETIC_ORDERS = 100_000;

export interface SharedService {
  baseUrl: string;
  demoKey: string;
  statePath: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    sharedService: SharedService;
  }
}

export default async function startSharedService(project: TestProject): Promise<() => Promise<void>> {
  const state = tempStateDir();
  const running = await startService(state.path, {}, ["--orders", String(SYNTHETIC_ORDERS)]);
  project.provide("sharedService", { baseUrl: running.baseUrl, demoKey: running.demoKey, statePath: state.path });
  return async () => {
    await running.stop();
    state.remove();
  };
}

/** The shared service, as a test file sees it: fetch() with the demo key unless the init has its own Authorization. */
export function sharedServiceOf(service: SharedService) {
  return {
    statePath: service.statePath,
    current: {
      baseUrl: service.baseUrl,
      demoKey: service.demoKey,
      call(path: string, init: RequestInit = {}) {
        const headers = new Headers(init.headers);
        if (!headers.has("Authorization")) headers.set("Authorization", `Bearer ${service.demoKey}`);
        return fetchLocal(`${service.baseUrl}${path}`, { ...init, headers });
      },
    },
  };
}
