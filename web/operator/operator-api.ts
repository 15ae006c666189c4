/**
 * The operators' console is a client of the operator API, with its session cookie: every check, limit and audit row
 * applies.
 */
import { clientOf, messageOf } from "../kit/api-client";
import { notice, show } from "../kit/dom";

export const admin = clientOf("/admin");

/**
 * An action from a view: its outcome said in `status` (what went wrong in the API's words), then the view read again.
 */
export const acting =
  (status: HTMLElement, reload: () => Promise<void>) =>
  async (work: () => Promise<unknown>, done: string): Promise<void> => {
    try {
      await work();
      show(status, notice(done));
      await reload();
    } catch (error) {
      show(status, notice(messageOf(error), "error"));
    }
  };
