import { useRef } from "hono/jsx/dom";
import { messageOf } from "./api-client";
import type { SignInProps } from "./console-shell";
import { noSpellcheck, Notice } from "./parts";
import { useLiveState } from "./live-state";

export interface SignInFormProps extends SignInProps {
  heading: string;
  /** The field: its id, its label, what it looks like. */
  field: { id: string; label: string; hint: string; pattern?: string };
  /** Exchanges what was typed for the session cookie. */
  exchange(secret: string): Promise<unknown>;
  footer: string;
}

/**
 * Signing in with a secret (a key, an operator's token): sent once, in a header, exchanged for the session cookie,
 * never kept by the page. Both consoles sign in this way.
 */
export function SignInForm({ heading, field, exchange, footer, message, signedIn }: SignInFormProps) {
  const [failure, setFailure] = useLiveState<string>();
  const input = useRef<HTMLInputElement>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    const secret = input.current!.value.trim();
    input.current!.value = "";
    try {
      await exchange(secret);
      await signedIn();
    } catch (error) {
      setFailure(messageOf(error));
      input.current!.focus();
    }
  };
  const { id, label, hint, pattern } = field;
  return (
    <div class="sign-in">
      <h1 tabindex={-1}>{heading}</h1>
      {message && <Notice text={message} kind={/signed out/i.test(message) ? "ok" : "error"} />}
      <form onSubmit={submit}>
        <label for={id}>{label}</label>
        <p id={`${id}-hint`} class="hint">
          {hint}
        </p>
        <input
          id={id}
          ref={input}
          name={id}
          type="password"
          autocomplete="off"
          required
          pattern={pattern}
          aria-describedby={`${id}-hint`}
          {...noSpellcheck}
        />
        <button type="submit">Sign in</button>
      </form>
      <div>{failure && <Notice text={failure} kind="error" />}</div>
      <p class="hint">{footer}</p>
    </div>
  );
}
