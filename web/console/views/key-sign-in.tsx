import { call } from "../../kit/api-client";
import type { SignInProps } from "../../kit/console-shell";
import { SignInForm } from "../../kit/sign-in-form";

/**
 * A key's shape (docs/api.md#key-format): the page imports nothing of the worker's, so a test holds this to the
 * worker's own.
 */
const KEY_PATTERN = "so_(live|test)_[0-9A-Za-z]{38}";

/** The callers' console: a key. */
export const SignIn = ({ message, signedIn }: SignInProps) => (
  <SignInForm
    {...{
      heading: "Sign in to the Store Orders console",
      field: {
        id: "api-key",
        label: "API key",
        hint:
          "so_live_ or so_test_ and 38 letters and digits (32 for keys made before November 2026). It is " +
          "exchanged for a 12-hour session and not kept by this page.",
        pattern: KEY_PATTERN,
      },
      exchange: (key) => call("POST", "/console/session", { key }),
      footer: "No key? An operator can send you a sign-in link instead.",
      message,
      signedIn,
    }}
  />
);
