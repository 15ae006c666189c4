import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * The workers tests' pool carries the fix for cloudflare/workers-sdk#15092
 * (patches/, applied by `npm install`): 0.15.1, the last pool for Node 20,
 * wrapped its Durable Object and entrypoint classes' prototype in one more
 * Proxy at every construction, so every property read on the N-th object of
 * a class ran N traps. The authorization matrix makes thousands of objects
 * in one file; unpatched, that was most of the workers project's time. This
 * runs the installed wrapper itself, out of the runtime, with a plain class.
 */
type Wrap = (superClass: new () => object, unknownKey: (key: string) => unknown) => new () => Record<string, unknown>;

function installedWrapper(): Wrap {
  const source = readFileSync(
    "node_modules/@cloudflare/vitest-pool-workers/dist/worker/lib/cloudflare/test-internal.mjs",
    "utf8",
  );
  const wrapper = /^function createProxyPrototypeClass\([\s\S]*?\n}$/m.exec(source)?.[0];
  if (!wrapper)
    throw new Error(
      "createProxyPrototypeClass not found in the installed pool: check patches/ against its new version",
    );
  return new Function("IGNORED_KEYS", `${wrapper}\nreturn createProxyPrototypeClass;`)(["self"]) as Wrap;
}

describe("the workers tests' pool", () => {
  const Wrapped = installedWrapper()(
    class {
      inherited() {
        return "from the class";
      }
    },
    (key) => `unknown ${key}`,
  );

  it("wraps a class's prototype once, however many objects it constructs", () => {
    new Wrapped();
    const prototype = Wrapped.prototype;
    for (let i = 0; i < 1_000; i++) new Wrapped();
    expect(Wrapped.prototype).toBe(prototype);
  });

  it("still reads inherited properties, and defers unknown ones as RPC needs", () => {
    const object = new Wrapped();
    expect((object.inherited as () => string)()).toBe("from the class");
    expect(object.anything).toBe("unknown anything");
    expect(object.self).toBeUndefined();
  });
});
