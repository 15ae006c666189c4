/**
 * API keys made for a local state before anything serves it (the demo key, the stress run's keys): through the
 * operator API of the Worker's own code, run over the state's files for this once (state-worker.ts), so a key's
 * account holds it as it holds every key. Never beside another runtime on the same files.
 */
import type { Scope } from "../../src/framework/operations/scopes";
import type { Plan } from "../../src/account/plans";
import { operatorApi } from "./operator-client";
import { withStateWorker } from "./state-worker";

/** A key asked for, as POST /admin/keys takes it. */
export interface KeyAsked {
  plan: Plan;
  name: string;
  perMinute?: number;
  perDay?: number;
  scopes?: Scope[];
}

/** Makes the keys asked for in the state at `stateDir`, in order, and returns them: the one time each is seen. */
export function issueLocalKeys(stateDir: string | undefined, asked: readonly KeyAsked[]): Promise<string[]> {
  return withStateWorker(stateDir, async (baseUrl) => {
    const api = operatorApi(baseUrl, { stateDir })!;
    const keys: string[] = [];
    for (const ask of asked) {
      const made = (await api.call("POST", "/keys", ask)) as { key: string } | undefined;
      if (!made) throw new Error(`the local Worker at ${baseUrl} did not answer`);
      keys.push(made.key);
    }
    return keys;
  });
}
