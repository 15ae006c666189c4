/**
 * The operators' console is a client of the operator API, with its session cookie: every check, limit and audit row
 * applies.
 */

import { clientOf, messageOf } from "../kit/api-client";
import type { Said } from "../kit/parts";
import { useLiveState } from "../kit/live-state";

export const admin = clientOf("/admin");

/**
 * A view's actions: each one's outcome said in `status` (what went wrong in the API's words), then the view read
 * again.
 */
export function useActing(reload: () => Promise<void>) {
  const [status, setStatus] = useLiveState<Said>();
  const act = async (work: () => Promise<unknown>, done: string): Promise<void> => {
    try {
      await work();
      setStatus({ text: done });
      await reload();
    } catch (error) {
      setStatus({ text: messageOf(error), kind: "error" });
    }
  };
  return { status, setStatus, act };
}
