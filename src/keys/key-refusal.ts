import { ApiError } from "../framework/api-error";
import type { KeyRefusal } from "../account/key-rules";
import { MAX_ACCOUNT_KEYS } from "../account/account-keys";
import { OperationNotTaken } from "../lib/audit-row";
import { CHALLENGE } from "./caller";

/** An account's refusal as the client is answered, thrown inside the operation's audit so its row is taken back. */
export function refusedByAccount(refusal: KeyRefusal, keyId: string, notLive: string): OperationNotTaken {
  return new OperationNotTaken(`the account refused: ${refusal.kind}`, { answer: answerTo(refusal, keyId, notLive) });
}

/** An audited key operation, with an account's refusal answered as it says once the audit took its rows back. */
export async function answeringRefusals<T>(operation: Promise<T>): Promise<T> {
  try {
    return await operation;
  } catch (error) {
    throw error instanceof OperationNotTaken && error.answer ? error.answer : error;
  }
}

function answerTo(refusal: KeyRefusal, keyId: string, notLive: string): ApiError {
  switch (refusal.kind) {
    case "not_live":
      return new ApiError("key_not_found", notLive);
    case "rotated_already":
      return new ApiError(
        "key_not_found",
        `Key ${keyId} was rotated already, to ${refusal.rotatedTo}: rotate the key that replaced it.`,
      );
    case "acts_only_on_itself":
      return actsOnlyOnItself("any key but itself, or itself when it was rotated away");
    case "invalid":
      return new ApiError("invalid_body", refusal.message);
    case "too_many_keys":
      return new ApiError(
        "too_many_keys",
        `This account holds ${MAX_ACCOUNT_KEYS} keys, every one of them live: revoke one before rotating.`,
      );
  }
}

/** 403 key_acts_only_on_itself: a key rotated away, or made to expire, acting beyond itself. */
export const actsOnlyOnItself = (what: string) =>
  new ApiError(
    "key_acts_only_on_itself",
    `This key was rotated away, or made to expire: it may act only on itself, not on ${what}. Use the key that ` +
      `replaced it.`,
    { "WWW-Authenticate": `${CHALLENGE}, error="insufficient_scope"` },
  );
