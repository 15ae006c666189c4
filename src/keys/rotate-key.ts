import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import { callDependency } from "../lib/call-dependency";
import { sha256Hex } from "../lib/digest";
import { accountOf, type ApiKeyRecord } from "../account/key-record";
import { accountStub, forgetKey } from "../account/account-stub";
import { auditedKeyOperation } from "./audit";
import { keyPrefixOf, newKeyOf } from "./issue-key";
import { storeKeyPointer } from "./kv-layout";
import { answeringRefusals, refusedByAccount } from "./key-refusal";

/**
 * A key replaced by a new one of its account, name, scopes and expiry: the old works through its grace, acting only on
 * itself. The account decides and does both in one step; `askedBy` is the asking key. Audited by `actor`; returns the
 * new key, its one showing.
 */
export async function rotateKey(
  c: Context<AppEnv>,
  target: ApiKeyRecord,
  graceSeconds: number,
  actor: string,
  askedBy?: string,
) {
  const account = accountOf(target);
  const graceEnds = new Date(Date.now() + graceSeconds * 1000).toISOString();
  const { key, made } = newKeyOf(keyPrefixOf(c));
  const db = c.env.DB;
  const rotation = await answeringRefusals(
    auditedKeyOperation(
      db,
      { operation: "rotate", keyId: target.id, changes: { rotatedTo: made.id, graceEnds, budget: account }, actor },
      () =>
        auditedKeyOperation(
          db,
          { operation: "create", keyId: made.id, changes: { rotatedFrom: target.id, budget: account }, actor },
          async () => {
            await storeKeyPointer(c.env.API_KEYS, await sha256Hex(key), { ...target, ...made, budget: account });
            const done = await callDependency("account", () =>
              accountStub(c.env.ACCOUNTS, account).rotateKey(target.id, made, graceEnds, askedBy),
            );
            if (done.kind !== "rotated")
              throw refusedByAccount(
                done,
                target.id,
                `Key ${target.id} is revoked or expired: there is nothing to rotate. Rotate a key that works.`,
              );
            forgetKey(c, done.previous);
            return done;
          },
        ),
    ),
  );
  return {
    key,
    id: made.id,
    start: made.start!,
    expiresAt: rotation.rotated.expiresAt ?? null,
    previous: { id: target.id, expiresAt: rotation.previous.expiresAt! },
  };
}
