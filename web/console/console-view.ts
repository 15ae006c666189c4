import type { FC } from "hono/jsx/dom";
import type { Session } from "../kit/api-types";
import type { ShellViewProps } from "../kit/console-shell";

/** A view of the callers' console: a component the shell shows while it is chosen. */
export type View = FC<ShellViewProps<Session>>;
