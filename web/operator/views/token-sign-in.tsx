import type { SignInProps } from "../../kit/console-shell";
import { SignInForm } from "../../kit/sign-in-form";
import { admin } from "../operator-api";

/** The operators' console: an operator's token. */
export const SignIn = ({ message, signedIn }: SignInProps) => (
  <SignInForm
    {...{
      heading: "Sign in to the Store Orders operators' console",
      field: {
        id: "operator-token",
        label: "Operator token",
        hint:
          "Yours from npm run keys -- operator add, or the deployment's OPERATOR_TOKEN. It is exchanged for a " +
          "12-hour session and not kept by this page.",
      },
      exchange: (key) => admin("POST", "/session", { key }),
      footer: "Or open a sign-in link from npm run keys -- operator-link <your name>.",
      message,
      signedIn,
    }}
  />
);
