import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * The workers tests' pool wraps its Durable Object and entrypoint classes'
 * prototype in a Proxy. Before the fix for cloudflare/workers-sdk#15092 it
 * added one more at every construction, so the N-th object's reads ran N traps
 * (the authorization matrix makes thousands). This runs the installed wrapper
 * itself, out of the runtime, with a plain class, so an upgrade that loses the
 * fix fails here.
 */
type Wrap = (superClass: new () => object, unknownKey: (key: string) => unknown) => new () => Record<string, unknown>;

function installedWrapper(): Wrap {
  const source = readFileSync(
    "node_modules/@cloudflare/vitest-plugin/dist/worker/lib/cloudflare/test-internal.mjs",
    "utf8",
  );
  const wrapper = /^function createProxyPrototypeClass\([\s\S]*?\n}$/m.exec(source)?.[0];
  if (!wrapper)
    throw new Error(
      "createProxyPrototypeClass not found in the installed pool: the plugin changed how it wraps classes",
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
